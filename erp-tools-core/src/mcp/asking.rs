//! How the server can put a tool's question to the client ([`Asking`]), decided by the
//! protocol revision and the capabilities the client declared.

use rmcp::RoleServer;
use rmcp::model::ProtocolVersion;
use rmcp::service::RequestContext;

use crate::telemetry::{self, QuestionForm};

/// Most questions one call may ask a 2025-11-25 client in a row.
pub(super) const MAX_ELICITATION_ROUNDS: usize = 5;

/// How the server can put a question to this client.
#[derive(Clone, Copy)]
pub(super) enum Asking {
    /// 2026-07-28, the request declaring elicitation: an `input_required` result.
    InputRequired,
    /// 2026-07-28, the request not declaring elicitation: the call cannot ask, and is
    /// answered `-32021` (missing required client capability) naming `elicitation`.
    Undeclared,
    /// An earlier revision whose client declared elicitation: `elicitation/create`.
    Elicitation,
    /// Neither: a tool error with the question and the choices.
    Cannot,
}

impl Asking {
    /// How a question of a call run after `rounds` elicitations reaches the client, for
    /// the call's span: asked, refused as a protocol error, or returned as a tool error
    /// (no way to ask, or the elicitation rounds used up).
    pub(super) fn question_form(self, rounds: usize) -> QuestionForm {
        match self {
            Asking::InputRequired => QuestionForm::Asked,
            Asking::Elicitation if rounds < MAX_ELICITATION_ROUNDS => QuestionForm::Asked,
            Asking::Undeclared => QuestionForm::RpcError(telemetry::rpc_code::MISSING_CAPABILITY),
            Asking::Elicitation | Asking::Cannot => QuestionForm::ToolError,
        }
    }

    pub(super) fn of(context: &RequestContext<RoleServer>) -> Asking {
        if context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
        {
            // Per request: the capabilities its `_meta` declares (a legacy session's
            // initialize capabilities when it has none).
            let declared = context
                .client_capabilities()
                .and_then(|caps| caps.elicitation)
                .is_some_and(|e| e.form.is_some() || e.url.is_none());
            return if declared {
                Asking::InputRequired
            } else {
                Asking::Undeclared
            };
        }
        let declared = context
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.elicitation.is_some());
        if declared {
            Asking::Elicitation
        } else {
            Asking::Cannot
        }
    }
}

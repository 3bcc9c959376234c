//! The categories a field of an ERP model is classified into.

/// What an ERP field is, for the argument rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// A person of the company's own side: creator, owner, approver, representative.
    /// No tool may take it.
    Identity,
    /// The company, a branch, or an organisational unit standing in for the branch. No
    /// tool may take it.
    Company,
    /// The document's or a line's status.
    Status,
    /// Workflow, posting, sending and approval flags and dates, accounting posting set-up
    /// and the ERP's own bookkeeping of the record.
    Workflow,
    /// Unit prices, rates, costs, price lists, margins.
    Price,
    /// Discounts.
    Discount,
    /// Taxes.
    Tax,
    /// Currency exchange rates.
    ExchangeRate,
    /// Totals and amounts the ERP computes.
    Amount,
    /// What a draft may take: references by code, quantities, dates asked for, notes.
    Allowed,
}

impl Category {
    /// Every category.
    pub const ALL: [Category; 10] = [
        Category::Identity,
        Category::Company,
        Category::Status,
        Category::Workflow,
        Category::Price,
        Category::Discount,
        Category::Tax,
        Category::ExchangeRate,
        Category::Amount,
        Category::Allowed,
    ];

    /// The key used in the data files and in `#[erp(allow = "..")]`.
    pub fn key(self) -> &'static str {
        match self {
            Category::Identity => "identity",
            Category::Company => "company",
            Category::Status => "status",
            Category::Workflow => "workflow",
            Category::Price => "price",
            Category::Discount => "discount",
            Category::Tax => "tax",
            Category::ExchangeRate => "exchange_rate",
            Category::Amount => "amount",
            Category::Allowed => "allowed",
        }
    }

    /// The category spelled `key`.
    pub fn parse(key: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.key() == key)
    }

    /// Whether no tool of any tier may take a field of this category.
    pub fn every_tier(self) -> bool {
        matches!(self, Category::Identity | Category::Company)
    }

    /// Whether a team may allow a field of this category in a draft tool with
    /// `#[erp(allow = "..", reason = "..")]`: every draft-only category may be, identity
    /// and company never.
    pub fn may_opt_in(self) -> bool {
        !self.every_tier() && self != Category::Allowed
    }

    /// What a field of this category is, for messages ("is a discount").
    pub fn what(self) -> &'static str {
        match self {
            Category::Identity => {
                "names a person of your own organisation (a creator, owner, approver or representative)"
            }
            Category::Company => {
                "names the company or an organisational unit that stands in for the branch"
            }
            Category::Status => "is a status",
            Category::Workflow => "is a workflow, approval or posting field",
            Category::Price => "is a price",
            Category::Discount => "is a discount",
            Category::Tax => "is a tax",
            Category::ExchangeRate => "is an exchange rate",
            Category::Amount => "is an amount the ERP computes",
            Category::Allowed => "may be filled by a draft",
        }
    }

    /// Where the value comes from instead, and what to write: the second half of the
    /// compile error.
    pub fn instead(self) -> &'static str {
        match self {
            Category::Identity => {
                "the person on whose behalf the agent acts comes from the caller's token (ToolContext::user_id) and \
                 approvers are chosen by your approval policy, not by the model; remove the field"
            }
            Category::Company => {
                "the company and branch come from the caller's token (ToolContext::branch_id, \
                 ToolContext::branch_code); remove the field"
            }
            Category::Status => {
                "a draft is always created in status draft and only a person moves it on; remove the field"
            }
            Category::Workflow => {
                "submitting, posting, sending and approving belong to a person in the ERP, which keeps its own record \
                 of them; remove the field"
            }
            Category::Price => {
                "prices come from the server's price list; take the item and unit instead, the server prices the line"
            }
            Category::Discount => {
                "discounts come from the server's price rules; remove the field, or if a person approves a requested \
                 discount, declare it with `#[erp(allow = \"discount\", reason = \"..\")]`"
            }
            Category::Tax => {
                "taxes are computed by the server from the item and the counterparty's fiscal data; remove the field"
            }
            Category::ExchangeRate => {
                "rates come from the server's rate table on the document's date; take the currency (an enum) instead"
            }
            Category::Amount => {
                "amounts and totals are computed by the server from its prices and the quantities; send item codes \
                 and quantities instead (an amount a person asks for, as in a payment request, is declared with \
                 `#[erp(allow = \"amount\", reason = \"..\")]`)"
            }
            Category::Allowed => "",
        }
    }
}

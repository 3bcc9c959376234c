//! Why arguments were refused: every problem, where it is and what is allowed.

use std::fmt;

/// Most problems collected for one call.
const MAX_PROBLEMS: usize = 8;

/// One reason the arguments were refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgumentProblem {
    /// Where, e.g. `lines[2].uom`; empty for the arguments object itself.
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

/// Every reason the arguments were refused (at most a handful are collected).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgumentErrors {
    /// The problems, in document order.
    pub problems: Vec<ArgumentProblem>,
}

impl fmt::Display for ArgumentErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            if p.path.is_empty() {
                write!(f, "{}", p.message)?;
            } else {
                write!(f, "`{}`: {}", p.path, p.message)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ArgumentErrors {}

/// Adds a problem at `path`, unless enough were collected.
pub(super) fn push(problems: &mut Vec<ArgumentProblem>, path: &str, message: String) {
    if problems.len() < MAX_PROBLEMS {
        problems.push(ArgumentProblem {
            path: path.to_string(),
            message,
        });
    }
}

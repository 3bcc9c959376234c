//! Storage: the database behind tools, idempotency keys and the audit log.

/// A connection to the application database (SQLite or PostgreSQL).
#[derive(Clone)]
pub struct Database {
    _private: (),
}

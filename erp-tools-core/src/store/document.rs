//! The document a stored row names (audit rows and key rows alike).

use sqlx::Row;

use crate::tool::handles::{DocumentId, DocumentRef};

/// The document a row names in its `document_type`, `document_id`, `document_text_id`
/// and `document_number` columns (audit rows and key rows alike), if it names one.
pub(crate) fn document_of_row(row: &sqlx::any::AnyRow) -> Result<Option<DocumentRef>, sqlx::Error> {
    let doc_type: Option<String> = row.try_get("document_type")?;
    let id = DocumentId::from_columns(
        row.try_get("document_id")?,
        row.try_get("document_text_id")?,
    );
    let number: Option<String> = row.try_get("document_number")?;
    Ok(match (doc_type, id, number) {
        (Some(doc_type), Some(id), Some(number)) => Some(DocumentRef {
            doc_type,
            id,
            number,
        }),
        _ => None,
    })
}

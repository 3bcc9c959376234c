//! Types as the user wrote them, for messages.

use quote::ToTokens;
use syn::Type;

/// A type as the user wrote it, for messages.
pub(crate) fn type_string(ty: &Type) -> String {
    let mut s = ty.to_token_stream().to_string();
    for (from, to) in [
        (" :: ", "::"),
        (":: ", "::"),
        (" < ", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        ("& ", "&"),
    ] {
        s = s.replace(from, to);
    }
    s
}

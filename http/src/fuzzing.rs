//! The body of the `http_reply` fuzz target, kept in the library so that its seed corpus
//! replays under a plain `cargo test`. Not part of the supported API.

use crate::wire::script::{self, Reading};
use crate::wire::READ_BYTES;

/// Fuzz body `http_reply`. Input: a byte that sets the bound on the reply's head, a byte
/// that sets the size of the pieces the reply arrives in, then the reply as a server sent
/// it. Whatever it is, reading it never panics, the connection's buffer holds no more than
/// the larger of its first size and the bound, and the reply read in pieces comes to the
/// same head, body and end as read whole.
pub fn http_reply(data: &[u8]) {
    let [bound, piece, reply @ ..] = data else {
        return;
    };
    let most = 16 + usize::from(*bound) * 256;
    let piece = 1 + usize::from(*piece % 64);
    let whole = script::read(vec![reply.to_vec()], most);
    let cut = script::read(reply.chunks(piece).map(<[u8]>::to_vec).collect(), most);
    for reading in [&whole, &cut] {
        assert!(
            reading.buffer <= READ_BYTES.max(most),
            "the buffer grew to {} bytes past the bound {most}",
            reading.buffer
        );
    }
    let outcome = |r: &Reading| {
        (
            r.head.clone(),
            r.body.clone(),
            r.end.as_ref().map(core::mem::discriminant),
        )
    };
    assert_eq!(
        outcome(&whole),
        outcome(&cut),
        "pieces of {piece} bytes read otherwise than the whole"
    );
}

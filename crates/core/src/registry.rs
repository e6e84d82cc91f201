//! What the registries of the open sets share (the disciplines', `qdisc/mod.rs`, and the
//! transports', `transport/mod.rs`): a registry line says where its dispatch enum keeps a
//! member, `inline` (in the enum itself: the one member every hot path meets, DropTail or TCP)
//! or `boxed` (out of line, so that the enum stays small), and these macros turn that word
//! into the member's type in the enum, a value to store there, and a reference to the member
//! itself from what the enum holds. Declared before the registries in `lib.rs`, so that both
//! see them; they import nothing.

/// The type a registry line stores in its enum: the member itself (`inline`) or a box.
macro_rules! store {
    (inline, $t:ty) => { $t };
    (boxed, $t:ty) => { Box<$t> };
}

/// A member as its registry line stores it (see `store!`).
macro_rules! stored {
    (inline, $e:expr) => { $e };
    (boxed, $e:expr) => { Box::new($e) };
}

/// The member itself, `&mut`, from where its registry line stores it (see `store!`).
macro_rules! unboxed_mut {
    (inline, $e:expr) => { $e };
    (boxed, $e:expr) => { &mut **$e };
}

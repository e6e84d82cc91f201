//! An arena of a run's elements by id (its ports, its flows): whole, or lent to the threads of
//! a run in parts without a copy.
//!
//! Rules:
//! - Whole, an arena is a `Vec`: it is built by pushing, read and changed by id, sliced and
//!   iterated ([`Arena::whole`]).
//! - A run on several threads lends its arenas ([`Arena::lend`]): every part's run gets a
//!   view, which reaches by id the elements its part owns, in place: no element is copied,
//!   and the arena's memory is the one run's. A view has no slice and no iterator; it reaches
//!   only the ids [`Arena::owns`] says, and every access is checked against the owners in
//!   builds with debug assertions and in this crate's own tests, release builds included
//!   (`engine/threads.rs` runs them on threads). Two views never reach one element, so the
//!   threads share no element (what makes the views sound).
//! - An element that two parts change (a flow whose ends run in two parts) is owned by one;
//!   each other part that needs it gets a shadow, its own copy made when the arena is lent,
//!   which reads and changes it under the same id. [`Arena::unlend`] hands a view's shadows
//!   back; [`Arena::restore`] makes the lent arena whole again once every view is gone.

use std::ops::{Deref, DerefMut, Index, IndexMut};
use std::sync::Arc;

/// No shadow at this id.
const NO_SHADOW: u32 = u32::MAX;

/// The elements of a run by id (module rules); `SHADOWS`: its views may hold shadows (the
/// flows'). An arena without them pays nothing for them: a whole one's access is a `Vec`'s.
pub struct Arena<T, const SHADOWS: bool = false> {
    /// The first element and the number of them, whole or lent (`own`'s, or the lent `Vec`'s).
    ptr: *mut T,
    len: usize,
    /// Whole: the elements. A view: empty.
    own: Vec<T>,
    /// A view: its part, what it owns and its shadows.
    view: Option<Box<View<T>>>,
}

// A view's pointer reaches its part's elements only (module rules); a whole arena is a `Vec`.
unsafe impl<T: Send, const S: bool> Send for Arena<T, S> {}

struct View<T> {
    part: u32,
    /// The part that owns every element, by id.
    owner: Arc<[u32]>,
    /// By id: the index of this view's shadow of the element, or [`NO_SHADOW`]; empty when the
    /// view has none.
    shadow_at: Vec<u32>,
    shadows: Vec<(u32, T)>,
    /// Keeps the lent elements in place while the view lives.
    _lent: Arc<Lent<T>>,
}

/// The elements of a lent arena, held while views reach them; [`Arena::restore`] takes them
/// back.
pub struct Lent<T> {
    elems: Vec<T>,
}

// The `Vec` is never touched while views exist: they reach its elements through their pointer.
unsafe impl<T: Send> Send for Lent<T> {}
unsafe impl<T: Send> Sync for Lent<T> {}

impl<T, const S: bool> Default for Arena<T, S> {
    fn default() -> Self {
        Arena::from(Vec::new())
    }
}

impl<T, const S: bool> From<Vec<T>> for Arena<T, S> {
    fn from(mut own: Vec<T>) -> Self {
        Arena { ptr: own.as_mut_ptr(), len: own.len(), own, view: None }
    }
}

impl<T: std::fmt::Debug, const S: bool> std::fmt::Debug for Arena<T, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.view {
            None => self.own.fmt(f),
            Some(v) => write!(f, "a view of part {} on {} elements", v.part, self.len),
        }
    }
}

impl<T, const S: bool> Arena<T, S> {
    /// The number of elements (a view: of the whole arena).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds an element to a whole arena; returns its id.
    pub fn push(&mut self, x: T) -> usize {
        self.whole_mut().push(x);
        self.reset();
        self.len - 1
    }

    /// Gives back a whole arena's spare capacity.
    pub fn shrink_to_fit(&mut self) {
        self.whole_mut().shrink_to_fit();
        self.reset();
    }

    /// The elements of a whole arena; a view panics (module rules).
    #[inline]
    fn whole(&self) -> &[T] {
        assert!(self.view.is_none(), "a view of an arena has no slice");
        &self.own
    }

    /// The elements of a whole arena, to change or resize ([`Arena::push`]: then
    /// [`Arena::reset`]); a view panics.
    fn whole_mut(&mut self) -> &mut Vec<T> {
        assert!(self.view.is_none(), "a view of an arena has no slice");
        &mut self.own
    }

    fn reset(&mut self) {
        self.ptr = self.own.as_mut_ptr();
        self.len = self.own.len();
    }

    /// Is this a view of a lent arena?
    #[inline]
    pub fn is_view(&self) -> bool {
        self.view.is_some()
    }

    /// Does this arena reach element `i`: any, when whole; a view, those its part owns and
    /// its shadows.
    pub fn owns(&self, i: usize) -> bool {
        match &self.view {
            None => i < self.len,
            Some(v) => v.owner[i] == v.part || v.shadow_at.get(i).is_some_and(|&s| s != NO_SHADOW),
        }
    }

    /// Where element `i` of a whole arena, or of a view that owns it, is in memory, for a cache
    /// hint: nothing is read.
    #[inline(always)]
    pub fn hint(&self, i: usize) -> *const T {
        self.ptr.wrapping_add(i)
    }

    /// Where element `i` is: a shadow of this view's, or the lent (or whole) elements.
    #[inline(always)]
    fn at(&self, i: usize) -> Result<usize, *mut T> {
        if S {
            if let Some(v) = &self.view {
                if let Some(&s) = v.shadow_at.get(i) {
                    if s != NO_SHADOW {
                        return Ok(s as usize);
                    }
                }
            }
        }
        #[cfg(any(debug_assertions, test))]
        if let Some(v) = &self.view {
            assert!(v.owner[i] == v.part, "part {} reached element {i} of part {}", v.part, v.owner[i]);
        }
        assert!(i < self.len, "index {i} out of an arena of {}", self.len);
        // in bounds: checked above
        Err(unsafe { self.ptr.add(i) })
    }

    /// Lends a whole arena out to `parts` parts (module rules): element `i` is owned by part
    /// `owner[i]`, and `shadows(i, x)` gives the other parts that change it each its copy of
    /// `x`, as (part, copy).
    /// Returns every part's view, by part, and the lent elements, for [`Arena::restore`];
    /// `self` is left empty.
    ///
    /// # Safety
    /// The runs that hold the views must reach, through each, only the elements it
    /// [`owns`](Arena::owns): a view of part `k` must never be used for an element of another
    /// part that is not its shadow. Builds with debug assertions, and this crate's tests,
    /// check every access.
    pub unsafe fn lend(&mut self, parts: usize, owner: Vec<u32>, shadows: impl Fn(usize, &T) -> Vec<(u32, T)>) -> (Vec<Arena<T, S>>, Arc<Lent<T>>) {
        assert_eq!(owner.len(), self.len, "an owner for every element");
        let mut own = std::mem::take(self.whole_mut());
        self.reset();
        let (ptr, len) = (own.as_mut_ptr(), own.len());
        let mut shadow_of: Vec<Vec<(u32, T)>> = (0..parts).map(|_| Vec::new()).collect();
        for (i, x) in own.iter().enumerate() {
            for (k, copy) in shadows(i, x) {
                assert!(S, "a shadow in an arena without them");
                debug_assert_ne!(k, owner[i], "a shadow for the owner itself");
                shadow_of[k as usize].push((i as u32, copy));
            }
        }
        let lent = Arc::new(Lent { elems: own });
        let owner: Arc<[u32]> = owner.into();
        let views = shadow_of
            .into_iter()
            .enumerate()
            .map(|(k, shadows)| {
                let mut shadow_at = Vec::new();
                if !shadows.is_empty() {
                    shadow_at = vec![NO_SHADOW; len];
                    for (s, &(i, _)) in shadows.iter().enumerate() {
                        shadow_at[i as usize] = s as u32;
                    }
                }
                let view = View { part: k as u32, owner: owner.clone(), shadow_at, shadows, _lent: lent.clone() };
                Arena { ptr, len, own: Vec::new(), view: Some(Box::new(view)) }
            })
            .collect();
        (views, lent)
    }

    /// Turns a view into an empty arena; returns its shadows, as (id, element).
    pub fn unlend(&mut self) -> Vec<(u32, T)> {
        let v = self.view.take().expect("unlend of a view");
        *self = Arena::default();
        v.shadows
    }

    /// Makes this arena whole again with the elements `lent` (from [`Arena::lend`]), once
    /// every view of them is gone ([`Arena::unlend`]).
    ///
    /// # Panics
    /// If a view of `lent` is still alive, or this arena is one.
    pub fn restore(&mut self, lent: Arc<Lent<T>>) {
        assert!(self.view.is_none(), "a view restored: unlend it first");
        let lent = Arc::try_unwrap(lent).unwrap_or_else(|_| panic!("an arena restored while a view of it lives"));
        *self = Arena::from(lent.elems);
    }
}

impl<T, const S: bool> Index<usize> for Arena<T, S> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        match self.at(i) {
            Ok(s) => &self.view.as_deref().expect("a view").shadows[s].1,
            // an element this arena reaches alone (module rules)
            Err(p) => unsafe { &*p },
        }
    }
}

impl<T, const S: bool> IndexMut<usize> for Arena<T, S> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        match self.at(i) {
            Ok(s) => &mut self.view.as_deref_mut().expect("a view").shadows[s].1,
            // an element this arena reaches alone, and `&mut self` is the only way to it here
            Err(p) => unsafe { &mut *p },
        }
    }
}

/// A range of a whole arena's elements (a view panics: module rules).
macro_rules! by_range {
    ($($r:ty),+) => {$(
        impl<T, const S: bool> Index<$r> for Arena<T, S> {
            type Output = [T];
            fn index(&self, r: $r) -> &[T] {
                &self.whole()[r]
            }
        }
        impl<T, const S: bool> IndexMut<$r> for Arena<T, S> {
            fn index_mut(&mut self, r: $r) -> &mut [T] {
                &mut self.whole_mut()[r]
            }
        }
    )+};
}
by_range!(std::ops::Range<usize>, std::ops::RangeTo<usize>, std::ops::RangeFrom<usize>);

/// A whole arena is its elements' slice (a view panics: module rules).
impl<T, const S: bool> Deref for Arena<T, S> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        self.whole()
    }
}

impl<T, const S: bool> DerefMut for Arena<T, S> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        self.whole_mut()
    }
}

impl<'a, T, const S: bool> IntoIterator for &'a Arena<T, S> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.whole().iter()
    }
}

impl<'a, T, const S: bool> IntoIterator for &'a mut Arena<T, S> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.whole_mut().iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lent(n: u32, parts: usize) -> (Arena<u32, true>, Vec<Arena<u32, true>>, Arc<Lent<u32>>) {
        let mut a = Arena::from((0..n).collect::<Vec<_>>());
        let owner = (0..n).map(|i| i % parts as u32).collect();
        // every element also shadowed by the next part
        let (views, lent) = unsafe { a.lend(parts, owner, |i, &x| vec![(((i + 1) % parts) as u32, x)]) };
        (a, views, lent)
    }

    #[test]
    fn a_view_reaches_its_own_elements_in_place_and_its_shadows_as_copies() {
        let (mut a, mut views, lent) = lent(10, 2);
        assert!(a.is_empty());
        let (v0, v1) = views.split_at_mut(1);
        let (v0, v1) = (&mut v0[0], &mut v1[0]);
        assert_eq!(v0.len(), 10);
        assert_eq!((0..10).filter(|&i| v0.owns(i)).count(), 10, "its own and its shadows");
        v0[4] += 100; // its own
        v0[5] += 1000; // its shadow of part 1's
        v1[5] += 10; // part 1's own
        v1[4] += 1; // its shadow
        assert_eq!((v0[4], v0[5], v1[4], v1[5]), (104, 1005, 5, 15));
        let sh1 = v1.unlend();
        assert_eq!(sh1.iter().map(|&(i, x)| (i, x)).filter(|&(i, _)| i == 4).collect::<Vec<_>>(), vec![(4, 5)]);
        let sh0 = v0.unlend();
        assert_eq!(sh0.len(), 5);
        a.restore(lent);
        assert_eq!((a[4], a[5]), (104, 15), "the owners' changes, in place");
        assert_eq!(a.iter().count(), 10);
    }

    #[test]
    #[should_panic(expected = "while a view of it lives")]
    fn an_arena_is_not_restored_while_a_view_lives() {
        let (mut a, views, lent) = lent(4, 2);
        let _keep = &views;
        a.restore(lent);
    }

    #[test]
    #[should_panic(expected = "has no slice")]
    fn a_view_has_no_slice() {
        let (_a, views, _lent) = lent(4, 2);
        let _ = views[0].iter().count();
    }

    #[test]
    #[should_panic(expected = "reached element")]
    fn a_view_that_reaches_another_parts_element_panics_in_tests() {
        let mut a: Arena<u8> = Arena::from(vec![1u8, 2, 3, 4]);
        let (views, _lent) = unsafe { a.lend(2, vec![0, 1, 0, 1], |_, _| Vec::new()) };
        let _ = views[0][1];
    }
}

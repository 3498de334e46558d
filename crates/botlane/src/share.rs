//! One value per key for the whole process, shared by every client that
//! asks for an equal key while any of them still holds it.
//!
//! A hosting platform runs hundreds or thousands of bots in one process,
//! almost always with equal TLS and REST options; building a rustls
//! configuration (the webpki roots) and an HTTP client (its connection
//! pool, resolver and TLS connector) for each of them cost more memory and
//! login time than the rest of an idle session. The table holds its values
//! weakly: once the last client using a value is gone, so is the value, and
//! nothing lives on in the process on botlane's account beyond one small
//! table per kind.

use std::sync::{Arc, Mutex, Weak};

use crate::sync::lock;

/// The values of one kind, by key.
pub(crate) struct ShareByKey<K, V> {
    entries: Mutex<Vec<(K, Weak<V>)>>,
}

impl<K, V> ShareByKey<K, V> {
    /// An empty table (usable in a `static`).
    pub(crate) const fn new() -> Self {
        Self {
            entries: Mutex::new(Vec::new()),
        }
    }

    /// The live value for a key equal to `key` (by `same`), or a new one
    /// from `make`, kept for the next caller. The table is locked while
    /// `make` runs, so that clients built at once with equal options build
    /// the value once.
    pub(crate) fn get_or_try_make<E>(
        &self,
        key: K,
        same: impl Fn(&K, &K) -> bool,
        make: impl FnOnce() -> Result<V, E>,
    ) -> Result<Arc<V>, E> {
        let mut entries = lock(&self.entries);
        // Forget the values nobody holds any more; the table stays as small
        // as the number of distinct option sets in use.
        entries.retain(|(_, value)| value.strong_count() > 0);
        let live = entries
            .iter()
            .find(|(k, _)| same(k, &key))
            .and_then(|(_, value)| value.upgrade());
        if let Some(value) = live {
            return Ok(value);
        }
        let value = Arc::new(make()?);
        entries.push((key, Arc::downgrade(&value)));
        Ok(value)
    }

    /// How many values the table keeps track of (live or not yet pruned).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        lock(&self.entries).len()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn make(n: u32) -> Result<u32, ()> {
        Ok(n)
    }

    #[test]
    fn equal_keys_share_one_value_while_it_is_held() {
        let table = ShareByKey::<&str, u32>::new();
        let a = table
            .get_or_try_make("a", |x, y| x == y, || make(1))
            .unwrap();
        let again = table
            .get_or_try_make("a", |x, y| x == y, || make(2))
            .unwrap();
        assert!(
            Arc::ptr_eq(&a, &again),
            "an equal key got a value of its own"
        );
        assert_eq!(*again, 1);
        let b = table
            .get_or_try_make("b", |x, y| x == y, || make(3))
            .unwrap();
        assert_eq!(*b, 3);
        assert_eq!(table.len(), 2);
    }

    #[test]
    fn a_value_nobody_holds_is_dropped_and_made_again() {
        let table = ShareByKey::<&str, u32>::new();
        let first = table
            .get_or_try_make("a", |x, y| x == y, || make(1))
            .unwrap();
        let weak = Arc::downgrade(&first);
        drop(first);
        assert!(weak.upgrade().is_none(), "the table kept the value alive");
        let second = table
            .get_or_try_make("a", |x, y| x == y, || make(2))
            .unwrap();
        assert_eq!(*second, 2);
        assert_eq!(table.len(), 1, "the dead entry was pruned");
    }

    #[test]
    fn a_failed_make_leaves_no_entry() {
        let table = ShareByKey::<&str, u32>::new();
        let failed = table.get_or_try_make("a", |x, y| x == y, || Err::<u32, &str>("no"));
        assert_eq!(failed.err(), Some("no"));
        assert_eq!(table.len(), 0);
    }
}

//! The secondary index: which live keys carry an index term.
//!
//! A store opened with an [`Indexer`] asks it for the terms of every value written (the API
//! server's are `label=value` pairs of an object's labels) and keeps, beside the primary index,
//! term → keys and key → terms, updated under the same lock in the same step as the primary
//! index. So a lookup at the current revision is exact: a selective read costs what it returns,
//! not what the collection holds. Strings are shared (`Arc<str>`), so a key appears once
//! however many terms it has.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::ops::Bound;
use std::sync::Arc;

/// Computes the index terms of a value written under a key. It runs on the store's writer
/// thread for every write, so it must be cheap and must not block.
#[derive(Clone)]
pub struct Indexer(Arc<TermsFn>);

/// What an [`Indexer`] wraps.
type TermsFn = dyn Fn(&str, &[u8]) -> Vec<String> + Send + Sync;

impl Indexer {
    /// Wraps `f`, called with each written key and value.
    pub fn new(f: impl Fn(&str, &[u8]) -> Vec<String> + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// The terms of `value` under `key`.
    #[must_use]
    pub fn terms(&self, key: &str, value: &[u8]) -> Vec<String> {
        (self.0)(key, value)
    }
}

impl fmt::Debug for Indexer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Indexer(..)")
    }
}

impl PartialEq for Indexer {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Indexer {}

/// Term → keys and key → terms.
#[derive(Debug, Default)]
pub(crate) struct Terms {
    by_term: HashMap<Arc<str>, BTreeSet<Arc<str>>>,
    by_key: HashMap<Arc<str>, Box<[Arc<str>]>>,
}

impl Terms {
    /// Records that `key` now has exactly `terms` (replacing what it had).
    pub(crate) fn set(&mut self, key: &str, terms: Vec<String>) {
        self.remove(key);
        if terms.is_empty() {
            return;
        }
        let key: Arc<str> = Arc::from(key);
        let mut mine = Vec::with_capacity(terms.len());
        for term in terms {
            let shared = match self.by_term.get_key_value(term.as_str()) {
                Some((t, _)) => t.clone(),
                None => Arc::from(term),
            };
            if self
                .by_term
                .entry(shared.clone())
                .or_default()
                .insert(key.clone())
            {
                mine.push(shared);
            }
        }
        self.by_key.insert(key, mine.into_boxed_slice());
    }

    /// Forgets `key`.
    pub(crate) fn remove(&mut self, key: &str) {
        let Some(terms) = self.by_key.remove(key) else {
            return;
        };
        for term in terms.iter() {
            if let Some(keys) = self.by_term.get_mut(term) {
                keys.remove(key);
                if keys.is_empty() {
                    self.by_term.remove(term);
                }
            }
        }
    }

    /// How many keys have `term`.
    pub(crate) fn count(&self, term: &str) -> usize {
        self.by_term.get(term).map_or(0, BTreeSet::len)
    }

    /// The keys with `term` under `prefix`, after `start_after` if given, in key order.
    pub(crate) fn keys<'a>(
        &'a self,
        term: &str,
        prefix: &'a str,
        start_after: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Arc<str>> + 'a {
        let lower = match start_after {
            Some(after) if after >= prefix => Bound::Excluded(after),
            _ => Bound::Included(prefix),
        };
        self.by_term
            .get(term)
            .into_iter()
            .flat_map(move |keys| keys.range::<str, _>((lower, Bound::Unbounded)))
            .take_while(move |k| k.starts_with(prefix))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(t: &Terms, term: &str, prefix: &str, after: Option<&str>) -> Vec<String> {
        t.keys(term, prefix, after).map(|k| k.to_string()).collect()
    }

    #[test]
    fn set_replaces_and_remove_forgets() {
        let mut t = Terms::default();
        t.set("/a/1", vec!["app=web".into(), "tier=fe".into()]);
        t.set("/a/2", vec!["app=web".into()]);
        t.set("/b/1", vec!["app=web".into()]);
        assert_eq!(keys(&t, "app=web", "/a/", None), ["/a/1", "/a/2"]);
        assert_eq!(keys(&t, "app=web", "/a/", Some("/a/1")), ["/a/2"]);
        assert_eq!(t.count("app=web"), 3);
        t.set("/a/1", vec!["app=db".into()]);
        assert_eq!(keys(&t, "app=web", "/a/", None), ["/a/2"]);
        assert_eq!(t.count("tier=fe"), 0);
        assert!(!t.by_term.contains_key("tier=fe"));
        t.remove("/a/2");
        t.remove("/b/1");
        t.remove("/nope");
        assert_eq!(t.count("app=web"), 0);
        assert_eq!(keys(&t, "app=db", "/", None), ["/a/1"]);
    }

    #[test]
    fn terms_are_shared_between_keys() {
        let mut t = Terms::default();
        t.set("/k/1", vec!["x=1".into()]);
        t.set("/k/2", vec!["x=1".into(), "x=1".into()]);
        let a = &t.by_key["/k/1"][0];
        let b = &t.by_key["/k/2"][0];
        assert!(Arc::ptr_eq(a, b));
        assert_eq!(
            t.by_key["/k/2"].len(),
            1,
            "a duplicate term is recorded once"
        );
    }
}

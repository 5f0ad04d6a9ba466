//! File-backed behaviour: restart keeps every object and continues the revision sequence, and
//! concurrent writers sharing group commits are all durable.

use std::collections::BTreeMap;

use bytes::Bytes;
use mni_store::{Error, ListOptions, Store, StoreOptions};

fn value(text: &str) -> Bytes {
    Bytes::from(text.to_owned())
}

#[tokio::test]
async fn restart_keeps_data_and_continues_revisions() -> Result<(), Error> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("nested/dir/store.db");
    let (a, c) = {
        let store = Store::open(&path, StoreOptions::default())?;
        assert_eq!(store.path(), Some(path.as_path()));
        store.create("/r/a", value("a1")).await?;
        let a = store.update("/r/a", value("a2"), None).await?;
        store.create("/r/b", value("b")).await?;
        let c = store.create("/r/c", value("c")).await?;
        store.delete("/r/b", None).await?; // revision 5: the newest row is a tombstone
        store.close().await;
        (a, c)
    };
    {
        let store = Store::open(&path, StoreOptions::default())?;
        assert_eq!(store.current_revision(), 5);
        assert_eq!(store.get("/r/a"), Some(a.clone()));
        assert_eq!(store.get("/r/b"), None);
        let past = store.list("/r/", &ListOptions::default().with_revision(3))?;
        assert_eq!(past.items.len(), 2, "history survives a restart");
        // Compacting everything removes the newest row (the tombstone at 5)...
        assert!(store.compact(5).await? > 0);
        // dropped without close: the drop waits for the writer.
    }
    let store = Store::open(&path, StoreOptions::default())?;
    // ...yet the sequence continues after it, and the compaction is remembered.
    assert_eq!(store.current_revision(), 5);
    assert_eq!(store.compacted_revision(), 5);
    let old = store.list("/r/", &ListOptions::default().with_revision(4));
    assert!(matches!(
        old,
        Err(Error::Compacted {
            requested: 4,
            compacted: 5
        })
    ));
    let items = store.list("/r/", &ListOptions::default())?.items;
    assert_eq!(items, vec![a, c]);
    let next = store.create("/r/b", value("again")).await?;
    assert_eq!((next.create_revision, next.mod_revision), (6, 6));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_share_commits_and_are_all_durable() -> Result<(), Error> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("store.db");
    let writers = 64;
    let per_writer = 10;
    let mut acknowledged = BTreeMap::new();
    {
        let store = Store::open(&path, StoreOptions::default())?;
        let tasks: Vec<_> = (0..writers)
            .map(|writer| {
                let store = store.clone();
                tokio::spawn(async move {
                    let mut written = Vec::new();
                    for i in 0..per_writer {
                        let key = format!("/g/{writer:02}/{i:02}");
                        let kv = store.create(&key, value(&key)).await?;
                        written.push(kv);
                    }
                    Ok::<_, Error>(written)
                })
            })
            .collect();
        for task in tasks {
            for kv in task.await.expect("writer task does not panic")? {
                acknowledged.insert(kv.mod_revision, kv);
            }
        }
        let total = writers * per_writer;
        assert_eq!(
            acknowledged.len(),
            total,
            "every write got its own revision"
        );
        assert_eq!(
            acknowledged.keys().copied().collect::<Vec<_>>(),
            (1..=total as i64).collect::<Vec<_>>()
        );
        let stats = store.stats();
        assert_eq!(stats.writes, total as u64);
        assert!(stats.commits >= 1 && stats.commits <= stats.writes);
        // No close: dropping the last handle must leave every acknowledged write on disk.
    }
    let store = Store::open(&path, StoreOptions::default())?;
    assert_eq!(store.current_revision(), acknowledged.len() as i64);
    for kv in acknowledged.values() {
        assert_eq!(store.get(&kv.key).as_ref(), Some(kv));
    }
    Ok(())
}

#[tokio::test]
async fn a_store_without_fsync_still_persists_on_clean_close() -> Result<(), Error> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("store.db");
    let options = StoreOptions::default().with_fsync(false).with_max_batch(4);
    {
        let store = Store::open(&path, options.clone())?;
        let writes = (0..20).map(|i| store.create_owned(format!("/n/{i}")));
        futures::future::try_join_all(writes).await?;
        store.close().await;
    }
    let store = Store::open(&path, options)?;
    assert_eq!(store.list("/n/", &ListOptions::default())?.items.len(), 20);
    Ok(())
}

trait CreateOwned {
    fn create_owned(&self, key: String)
    -> impl Future<Output = Result<mni_store::KeyValue, Error>>;
}

impl CreateOwned for Store {
    async fn create_owned(&self, key: String) -> Result<mni_store::KeyValue, Error> {
        self.create(&key, value("v")).await
    }
}

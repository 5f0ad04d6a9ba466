//! Lists by prefix, with pages, at the current and at past revisions, over many keys; and
//! compaction: what it removes, what it keeps, and the errors for compacted revisions.

use bytes::Bytes;
use mni_store::{Error, ListOptions, ListResult, Store};

fn value(text: &str) -> Bytes {
    Bytes::from(text.to_owned())
}

fn keys(result: &ListResult) -> Vec<&str> {
    result.items.iter().map(|kv| kv.key.as_str()).collect()
}

#[tokio::test]
async fn list_by_prefix_with_pages() -> Result<(), Error> {
    let store = Store::in_memory()?;
    for key in ["/a/3", "/a/1", "/ab", "/a/2", "/b/1", "/a/4", "/a"] {
        store.create(key, value(key)).await?;
    }
    let all = store.list("/a/", &ListOptions::default())?;
    assert_eq!(keys(&all), ["/a/1", "/a/2", "/a/3", "/a/4"]);
    assert_eq!((all.revision, all.more, all.remaining), (7, false, 0));
    assert_eq!(store.list("", &ListOptions::default())?.items.len(), 7);

    let first = store.list("/a/", &ListOptions::default().with_limit(3))?;
    assert_eq!(keys(&first), ["/a/1", "/a/2", "/a/3"]);
    assert_eq!((first.more, first.remaining), (true, 1));
    let next = ListOptions::default()
        .with_revision(first.revision)
        .with_start_after("/a/3")
        .with_limit(3);
    let second = store.list("/a/", &next)?;
    assert_eq!(keys(&second), ["/a/4"]);
    assert_eq!((second.more, second.remaining), (false, 0));

    let unlimited = store.list("/a/", &ListOptions::default().with_limit(0))?;
    assert_eq!(unlimited.items.len(), 4);
    let before_prefix = store.list("/a/", &ListOptions::default().with_start_after("/"))?;
    assert_eq!(before_prefix.items.len(), 4);
    let future = store.list("/a/", &ListOptions::default().with_revision(8));
    assert!(matches!(
        future,
        Err(Error::FutureRevision {
            requested: 8,
            current: 7
        })
    ));
    Ok(())
}

#[tokio::test]
async fn list_at_a_past_revision_reads_the_log() -> Result<(), Error> {
    let store = Store::in_memory()?;
    let a1 = store.create("/p/a", value("a1")).await?;
    let b1 = store.create("/p/b", value("b1")).await?;
    store.create("/q/x", value("x")).await?;
    let then = store.current_revision();
    store.update("/p/a", value("a2"), None).await?;
    store.delete("/p/b", None).await?;
    let c1 = store.create("/p/c", value("c1")).await?;

    let past = store.list("/p/", &ListOptions::default().with_revision(then))?;
    assert_eq!(past.items, vec![a1.clone(), b1.clone()]);
    assert_eq!(past.revision, then);
    let page = ListOptions::default().with_revision(then).with_limit(1);
    let page = store.list("/p/", &page)?;
    assert_eq!((page.items.clone(), page.remaining), (vec![a1.clone()], 1));
    let rest = ListOptions::default()
        .with_revision(then)
        .with_start_after("/p/a");
    assert_eq!(store.list("/p/", &rest)?.items, vec![b1]);
    let at_first = store.list("/p/", &ListOptions::default().with_revision(1))?;
    assert_eq!(at_first.items, vec![a1]);
    assert!(
        store
            .list("/p/", &ListOptions::default().with_revision(0))?
            .items
            .is_empty()
    );

    let now = store.list("/p/", &ListOptions::default())?;
    assert_eq!(keys(&now), ["/p/a", "/p/c"]);
    assert_eq!(now.items[1], c1);
    let everything = store.list("", &ListOptions::default().with_revision(then))?;
    assert_eq!(keys(&everything), ["/p/a", "/p/b", "/q/x"]);
    Ok(())
}

#[tokio::test]
async fn compaction_keeps_current_state_and_rejects_old_revisions() -> Result<(), Error> {
    let store = Store::in_memory()?;
    for round in 0..5 {
        for key in ["/c/a", "/c/b", "/c/c"] {
            match round {
                0 => store.create(key, value("0")).await?,
                _ => store.update(key, value(&round.to_string()), None).await?,
            };
        }
    }
    store.delete("/c/b", None).await?;
    store.create("/c/d", value("d")).await?; // revision 17
    let before = store.list("/c/", &ListOptions::default().with_revision(16))?;
    let current = store.list("/c/", &ListOptions::default())?;

    // Rows up to 16: 15 versions + 1 tombstone; the newest of /c/a and /c/c stay.
    assert_eq!(store.compact(16).await?, 14);
    assert_eq!(store.compacted_revision(), 16);
    assert_eq!(store.compact(10).await?, 0, "compacting below is a no-op");
    assert!(matches!(
        store.compact(99).await,
        Err(Error::FutureRevision { .. })
    ));

    let old = store.list("/c/", &ListOptions::default().with_revision(15));
    assert!(matches!(
        old,
        Err(Error::Compacted {
            requested: 15,
            compacted: 16
        })
    ));
    assert!(matches!(
        store.watch("/c/", 15),
        Err(Error::Compacted { .. })
    ));
    assert_eq!(
        store.list("/c/", &ListOptions::default().with_revision(16))?,
        before
    );
    assert_eq!(store.list("/c/", &ListOptions::default())?, current);

    let mut watch = store.watch("/c/", 16)?;
    let event = watch.next().await.expect("one event")?;
    assert_eq!((event.kv.key.as_str(), event.revision()), ("/c/d", 17));

    assert_eq!(
        store.compact(17).await?,
        0,
        "the newest live versions always stay"
    );
    assert_eq!(store.list("/c/", &ListOptions::default())?, current);
    Ok(())
}

#[tokio::test]
async fn ten_thousand_keys_list_and_page_in_order() -> Result<(), Error> {
    let store = Store::in_memory()?;
    let writes = (0..10_000).map(|i| {
        let key = format!("/registry/pods/ns{}/pod-{i:05}", i % 10);
        let store = store.clone();
        async move { store.create(&key, value("{}")).await }
    });
    futures::future::try_join_all(writes).await?;
    assert_eq!(
        store
            .list("/registry/pods/", &ListOptions::default())?
            .items
            .len(),
        10_000
    );
    let ns3 = store.list("/registry/pods/ns3/", &ListOptions::default())?;
    assert_eq!(ns3.items.len(), 1000);
    assert!(ns3.items.windows(2).all(|pair| pair[0].key < pair[1].key));

    let mut seen = 0;
    let mut options = ListOptions::default().with_limit(777);
    loop {
        let page = store.list("/registry/pods/", &options)?;
        seen += page.items.len();
        assert_eq!(page.remaining, 10_000 - seen);
        let Some(last) = page.items.last().filter(|_| page.more) else {
            break;
        };
        options = options
            .with_revision(page.revision)
            .with_start_after(last.key.clone());
    }
    assert_eq!(seen, 10_000);
    Ok(())
}

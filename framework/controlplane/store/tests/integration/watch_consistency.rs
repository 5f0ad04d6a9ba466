//! Watches under concurrent writers: the watched revisions are exactly the committed ones, in
//! order, with no gap or duplicate at the switch-over from history to live events, and applying
//! them to the state at the start revision gives the final state — also for lagging watchers.

use std::collections::BTreeMap;

use bytes::Bytes;
use mni_store::{Error, EventKind, KeyValue, ListOptions, Store, StoreOptions, Watch};

/// Each writer cycles its own keys through create, update, update, delete, with preconditions.
async fn write_cycles(store: Store, writer: usize, cycles: usize) -> Result<Vec<i64>, Error> {
    let mut revisions = Vec::new();
    for cycle in 0..cycles {
        let key = format!("/w/{writer}/{}", cycle % 3);
        let kv = match store.get(&key) {
            None => {
                store
                    .create(&key, Bytes::from(format!("{writer}-{cycle}")))
                    .await?
            }
            Some(current) if cycle % 4 == 3 => {
                store.delete(&key, Some(current.mod_revision)).await?
            }
            Some(current) => {
                let value = Bytes::from(format!("{writer}-{cycle}"));
                store
                    .update(&key, value, Some(current.mod_revision))
                    .await?
            }
        };
        revisions.push(kv.mod_revision);
        if cycle % 5 == 0 {
            tokio::task::yield_now().await;
        }
    }
    Ok(revisions)
}

/// Reads events until the watch has passed `until`; returns them.
async fn drain(watch: &mut Watch, until: i64) -> Result<Vec<mni_store::Event>, Error> {
    let mut events = Vec::new();
    while events
        .last()
        .is_none_or(|event: &mni_store::Event| event.revision() < until)
    {
        events.push(watch.next().await.expect("the watch does not end")?);
    }
    Ok(events)
}

fn apply(state: &mut BTreeMap<String, KeyValue>, event: &mni_store::Event) {
    match event.kind {
        EventKind::Deleted => {
            let removed = state.remove(&event.kv.key);
            assert_eq!(
                removed.as_ref(),
                event.prev.as_ref(),
                "prev of a delete is the last value"
            );
        }
        EventKind::Created => {
            assert!(event.prev.is_none());
            assert!(
                state
                    .insert(event.kv.key.clone(), event.kv.clone())
                    .is_none()
            );
        }
        EventKind::Updated => {
            let replaced = state.insert(event.kv.key.clone(), event.kv.clone());
            assert_eq!(
                replaced.as_ref(),
                event.prev.as_ref(),
                "prev of an update is the last value"
            );
        }
    }
}

async fn check_watch_under_writers(options: StoreOptions) -> Result<(), Error> {
    let store = Store::open_in_memory(options)?;
    // Some history before the watch's start revision, and some after it.
    let mut committed: Vec<i64> = write_cycles(store.clone(), 99, 30).await?;
    let start = committed[14];
    let start_state: BTreeMap<String, KeyValue> = store
        .list("/w/", &ListOptions::default().with_revision(start))?
        .items
        .into_iter()
        .map(|kv| (kv.key.clone(), kv))
        .collect();

    let writers: Vec<_> = (0..6)
        .map(|writer| tokio::spawn(write_cycles(store.clone(), writer, 200)))
        .collect();
    // Start watching while the writers are writing: the switch-over happens under load.
    tokio::task::yield_now().await;
    let mut watch = store.watch("/w/", start)?;
    let first = drain(&mut watch, start + 1).await?;
    for writer in writers {
        committed.extend(writer.await.expect("writer does not panic")?);
    }
    let last = store.current_revision();
    let mut events = first;
    events.extend(drain(&mut watch, last).await?);

    let watched: Vec<i64> = events.iter().map(mni_store::Event::revision).collect();
    committed.sort_unstable();
    let expected: Vec<i64> = committed
        .into_iter()
        .filter(|revision| *revision > start)
        .collect();
    assert_eq!(
        watched, expected,
        "exactly the committed revisions, in order"
    );
    assert_eq!(
        expected.len() as i64,
        last - start,
        "no revision is skipped"
    );

    let mut state = start_state;
    for event in &events {
        apply(&mut state, event);
    }
    let now = store.list("/w/", &ListOptions::default())?.items;
    assert_eq!(
        state.into_values().collect::<Vec<_>>(),
        now,
        "replaying gives the final state"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_from_the_past_while_writers_write() -> Result<(), Error> {
    check_watch_under_writers(StoreOptions::default()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lagging_watch_while_writers_write() -> Result<(), Error> {
    check_watch_under_writers(StoreOptions::default().with_watch_buffer(2)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_store_watch_while_writers_write() -> Result<(), Error> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(
        &dir.path().join("w.db"),
        StoreOptions::default().with_watch_buffer(4),
    )?;
    let mut watch = store.watch("/w/", 0)?;
    let writers: Vec<_> = (0..8)
        .map(|writer| tokio::spawn(write_cycles(store.clone(), writer, 25)))
        .collect();
    let mut committed = Vec::new();
    for writer in writers {
        committed.extend(writer.await.expect("writer does not panic")?);
    }
    committed.sort_unstable();
    let events = drain(&mut watch, store.current_revision()).await?;
    let watched: Vec<i64> = events.iter().map(mni_store::Event::revision).collect();
    assert_eq!(watched, committed);
    Ok(())
}

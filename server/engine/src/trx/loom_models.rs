//! Loom models of the lock-free read-view structures: a view copies one published state,
//! never parts of two, and purge's limit never passes a view that is open.
//!
//! Run (release, preemption bound 2):
//!
//! ```text
//! LOOM_MAX_PREEMPTIONS=2 RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p tpbed-engine --release --lib loom
//! ```

use loom::sync::Arc;
use loom::thread;

use super::active_set::ActiveSet;
use super::views::ViewSlots;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(2);
    }
    b.check(f);
}

/// The states the writer of the models publishes, after the initial (counter 1, none active):
/// transactions 1 and 2 begin; then 1 commits (number 3) and 4 begins. The lists fit the
/// first chunk: a chunk is made through `std::sync::OnceLock`, whose ordering loom does not
/// see (it would report a loom atomic made in one thread and read in another as a race).
const PUBLISHED: [(u64, &[u64]); 3] = [(1, &[]), (3, &[1, 2]), (5, &[2, 4])];

fn publish_all(set: &ActiveSet) {
    for (low, ids) in &PUBLISHED[1..] {
        set.publish(*low, ids.iter().copied());
    }
}

/// A view opened while the writer publishes and purge computes its limit: the view holds one
/// published state, and purge's limit is no newer than the view's `low_limit_no`.
#[test]
fn loom_view_open_races_publication_and_purge() {
    model(|| {
        let set = Arc::new(ActiveSet::new(1));
        let slots = Arc::new(ViewSlots::new());
        let writer = {
            let set = Arc::clone(&set);
            thread::spawn(move || publish_all(&set))
        };
        let purge = {
            let (set, slots) = (Arc::clone(&set), Arc::clone(&slots));
            thread::spawn(move || slots.purge_limit(&set))
        };
        let open = slots.open(&set, 0, 0);
        let v = &open.view;
        assert!(
            PUBLISHED
                .iter()
                .any(|&(low, ids)| v.low_limit_id == low && v.active == ids),
            "a view of a state never published: {v:?}"
        );
        assert_eq!(v.low_limit_no, v.low_limit_id);
        assert_eq!(
            v.up_limit_id,
            v.active.first().copied().unwrap_or(v.low_limit_id)
        );
        let limit = purge.join().expect("purge");
        assert!(
            limit <= v.low_limit_no,
            "purge's limit {limit} passed an open view's {}",
            v.low_limit_no
        );
        writer.join().expect("writer");
        slots.close(open);
        assert_eq!(slots.count(), 0);
    });
}

/// Two views open at once take two slots, and purge's limit respects the older one.
#[test]
fn loom_two_views_and_purge() {
    model(|| {
        let set = Arc::new(ActiveSet::new(1));
        let slots = Arc::new(ViewSlots::new());
        let other = {
            let (set, slots) = (Arc::clone(&set), Arc::clone(&slots));
            thread::spawn(move || {
                let v = slots.open(&set, 0, 0);
                let low = v.view.low_limit_no;
                (v, low)
            })
        };
        set.publish(2, std::iter::empty());
        let mine = slots.open(&set, 0, 0);
        assert_eq!(
            mine.view.low_limit_no, 2,
            "published before, in this thread"
        );
        let (theirs, low) = other.join().expect("view");
        assert_eq!(slots.count(), 2);
        assert_eq!(slots.purge_limit(&set), low.min(2));
        slots.close(theirs);
        assert_eq!(slots.purge_limit(&set), 2);
        slots.close(mine);
        assert_eq!(slots.count(), 0);
    });
}

//! What the controller remembers of an HPA between syncs (C2.3): its
//! recommendations and scale events, each kept as the controller keeps its
//! slice (a new entry takes the slot of the last expired or outdated one, or
//! is appended), so that which entries linger, and which slot a new one takes,
//! stay the controller's.
//!
//! The controller walks the whole slice at every sync, so a sync's cost grows
//! with the window or period over the sync period (a 300 s window at 1 ms
//! syncs is 300,000 entries a sync). Here what a sync asks is kept ready
//! instead: the highest and lowest recommendation inside a window in a
//! monotonic deque (amortized O(1) a sync), the entries' ages in a queue and a
//! max-heap (O(log n)), and the changes inside a policy period as prefix sums
//! over the events by time (O(log n)). The answers are those of the walk, at
//! every boundary: the unit tests compare both on random histories.

use std::collections::{BinaryHeap, VecDeque};

use super::flags::Millis;

/// Whether an entry stamped `at` is inside a window of `window` ms at `now`
/// (C2.2: an entry of age `a` is inside iff `a < window`).
pub(crate) fn inside(at: Millis, now: Millis, window: Millis) -> bool {
    now - at < window
}

/// An unnormalized recommendation, as the controller records it (C2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recommendation {
    /// The desired count from the metrics.
    pub replicas: i32,
    /// When it was recorded.
    pub at: Millis,
}

/// A scale event: the size of one change of the replica count (C7.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleEvent {
    /// `|new − previous|`.
    pub change: i32,
    /// When the change was made.
    pub at: Millis,
    /// Marked for reuse: older than the direction's longest policy period.
    pub outdated: bool,
}

/// Slots by age: those not yet expired oldest first, the expired ones in a
/// max-heap (the controller reuses the last expired slot).
#[derive(Clone, Debug, Default)]
struct Ages {
    live: VecDeque<usize>,
    expired: BinaryHeap<usize>,
}

impl Ages {
    /// The ages of `count` slots: `live` tells the live ones from the expired.
    fn new(count: usize, live: impl Fn(usize) -> bool, time_of: impl Fn(usize) -> Millis) -> Self {
        let (mut alive, expired): (Vec<usize>, Vec<usize>) = (0..count).partition(|&s| live(s));
        alive.sort_by_key(|&s| time_of(s));
        Self {
            live: alive.into(),
            expired: expired.into(),
        }
    }

    /// Adds a live slot stamped `at`, in time order.
    fn insert_live(&mut self, slot: usize, at: Millis, time_of: impl Fn(usize) -> Millis) {
        let position = if self.live.back().is_none_or(|&last| time_of(last) <= at) {
            self.live.len()
        } else {
            self.live.partition_point(|&s| time_of(s) <= at)
        };
        self.live.insert(position, slot);
    }

    /// Moves the live slots that are no longer inside `window` at `now` to the
    /// expired ones, and returns them.
    fn expire(
        &mut self,
        now: Millis,
        window: Millis,
        time_of: impl Fn(usize) -> Millis,
    ) -> Vec<usize> {
        let mut moved = Vec::new();
        while let Some(&oldest) = self.live.front() {
            if inside(time_of(oldest), now, window) {
                break;
            }
            self.live.pop_front();
            self.expired.push(oldest);
            moved.push(oldest);
        }
        moved
    }
}

/// The highest (or lowest) recommendation inside one window: the candidates
/// in time order, each higher (lower) than every later one.
#[derive(Clone, Debug, Default)]
struct Extreme {
    /// The window, and the latest time asked; `None`: to be rebuilt.
    asked: Option<(Millis, Millis)>,
    candidates: VecDeque<Recommendation>,
}

impl Extreme {
    /// Whether `a` makes `b`, which is not newer, no candidate.
    fn beats(a: i32, b: i32, highest: bool) -> bool {
        if highest { a >= b } else { a <= b }
    }

    fn push(&mut self, entry: Recommendation, highest: bool) {
        if self
            .candidates
            .back()
            .is_some_and(|last| last.at > entry.at)
        {
            // Out of time order (only a hand-made history): rebuild when asked.
            self.asked = None;
            return;
        }
        while self
            .candidates
            .back()
            .is_some_and(|last| Self::beats(entry.replicas, last.replicas, highest))
        {
            self.candidates.pop_back();
        }
        self.candidates.push_back(entry);
    }

    /// The extreme of the slots inside `window` at `now`, if any.
    fn get(
        &mut self,
        slots: &[Recommendation],
        now: Millis,
        window: Millis,
        highest: bool,
    ) -> Option<i32> {
        let current = self
            .asked
            .is_some_and(|(w, last)| w == window && last <= now);
        if !current {
            let mut inside_now: Vec<Recommendation> = slots
                .iter()
                .copied()
                .filter(|r| inside(r.at, now, window))
                .collect();
            inside_now.sort_by_key(|r| r.at);
            self.candidates.clear();
            for entry in inside_now {
                self.push(entry, highest);
            }
        }
        while self
            .candidates
            .front()
            .is_some_and(|oldest| !inside(oldest.at, now, window))
        {
            self.candidates.pop_front();
        }
        self.asked = Some((window, now));
        self.candidates.front().map(|r| r.replicas)
    }
}

/// The recommendations of one HPA.
#[derive(Clone, Debug, Default)]
pub struct Recommendations {
    slots: Vec<Recommendation>,
    /// The window after which slots expire and the latest time asked, which
    /// `ages` is for; `None`: to be rebuilt.
    aged: Option<(Millis, Millis)>,
    ages: Ages,
    highest: Extreme,
    lowest: Extreme,
}

impl From<Vec<Recommendation>> for Recommendations {
    fn from(slots: Vec<Recommendation>) -> Self {
        Self {
            slots,
            ..Self::default()
        }
    }
}

impl Recommendations {
    /// The slice as the controller holds it.
    pub fn slots(&self) -> &[Recommendation] {
        &self.slots
    }

    /// The highest recommendation inside `window` at `now`.
    pub fn highest(&mut self, now: Millis, window: Millis) -> Option<i32> {
        self.highest.get(&self.slots, now, window, true)
    }

    /// The lowest recommendation inside `window` at `now`.
    pub fn lowest(&mut self, now: Millis, window: Millis) -> Option<i32> {
        self.lowest.get(&self.slots, now, window, false)
    }

    /// Records `replicas` at `now` in the last slot whose entry is no longer
    /// inside `expiry`, or at the end.
    pub fn record(&mut self, replicas: i32, now: Millis, expiry: Millis) {
        let current = self
            .aged
            .is_some_and(|(w, last)| w == expiry && last <= now);
        let slots = &self.slots;
        let time_of = |slot: usize| slots[slot].at;
        if !current {
            let live = |slot: usize| inside(slots[slot].at, now, expiry);
            self.ages = Ages::new(slots.len(), live, time_of);
        }
        self.ages.expire(now, expiry, time_of);
        self.aged = Some((expiry, now));
        let entry = Recommendation { replicas, at: now };
        let slot = match self.ages.expired.pop() {
            Some(slot) => {
                let replaced = std::mem::replace(&mut self.slots[slot], entry);
                // Only a window longer than `expiry` can still hold it.
                for extreme in [&mut self.highest, &mut self.lowest] {
                    if extreme
                        .asked
                        .is_some_and(|(window, _)| inside(replaced.at, now, window))
                    {
                        extreme.asked = None;
                    }
                }
                slot
            }
            None => {
                self.slots.push(entry);
                self.slots.len() - 1
            }
        };
        let slots = &self.slots;
        self.ages.insert_live(slot, now, |s| slots[s].at);
        self.highest.push(entry, true);
        self.lowest.push(entry, false);
    }
}

/// The changes of one direction's events by time, as a Fenwick tree of
/// wrapping sums (Go adds `int32`s); a replaced event's change is zeroed.
#[derive(Clone, Debug, Default)]
struct Sums {
    /// `(at, change)` in time order.
    log: Vec<(Millis, i32)>,
    /// `tree[i - 1]`: the sum of `log[i - lowbit(i) .. i]`.
    tree: Vec<i32>,
    /// Zeroed entries of `log`.
    zeroed: usize,
}

impl Sums {
    /// The sum of `log[..count]`.
    fn prefix(&self, mut count: usize) -> i32 {
        let mut sum = 0_i32;
        while count > 0 {
            sum = sum.wrapping_add(self.tree[count - 1]);
            count &= count - 1;
        }
        sum
    }

    fn append(&mut self, at: Millis, change: i32) {
        let i = self.log.len() + 1;
        let covered_from = i - (i & i.wrapping_neg());
        let node = change
            .wrapping_add(self.prefix(i - 1))
            .wrapping_sub(self.prefix(covered_from));
        self.log.push((at, change));
        self.tree.push(node);
    }

    fn add(&mut self, index: usize, delta: i32) {
        let mut i = index + 1;
        while i <= self.tree.len() {
            self.tree[i - 1] = self.tree[i - 1].wrapping_add(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// The sum of the changes inside `period` at `now`.
    fn within(&self, period: Millis, now: Millis) -> i32 {
        let first = self
            .log
            .partition_point(|&(at, _)| !inside(at, now, period));
        self.prefix(self.log.len()).wrapping_sub(self.prefix(first))
    }
}

/// One direction's scale events.
#[derive(Clone, Debug, Default)]
pub struct ScaleEvents {
    slots: Vec<ScaleEvent>,
    ages: Ages,
    sums: Sums,
    /// Each slot's entry in `sums.log`.
    logged_at: Vec<usize>,
}

impl From<Vec<ScaleEvent>> for ScaleEvents {
    fn from(slots: Vec<ScaleEvent>) -> Self {
        let ages = Ages::new(slots.len(), |s| !slots[s].outdated, |s| slots[s].at);
        let mut events = Self {
            slots,
            ages,
            ..Self::default()
        };
        events.rebuild_sums();
        events
    }
}

impl ScaleEvents {
    /// The slice as the controller holds it.
    pub fn slots(&self) -> &[ScaleEvent] {
        &self.slots
    }

    /// `getReplicasChangePerPeriod`: the changes inside `period` at `now`,
    /// outdated or not.
    pub fn changes_within(&self, period: Millis, now: Millis) -> i32 {
        self.sums.within(period, now)
    }

    /// Stores a change (C7.5): marks the events no longer inside `longest`
    /// outdated, and puts the new one in the last outdated slot, or at the end.
    pub fn store(&mut self, change: i32, now: Millis, longest: Millis) {
        let slots = &self.slots;
        for slot in self.ages.expire(now, longest, |s| slots[s].at) {
            self.slots[slot].outdated = true;
        }
        let event = ScaleEvent {
            change,
            at: now,
            outdated: false,
        };
        let slot = match self.ages.expired.pop() {
            Some(slot) => {
                let replaced = self.logged_at[slot];
                let old = self.slots[slot].change;
                self.sums.add(replaced, old.wrapping_neg());
                self.sums.log[replaced].1 = 0;
                self.sums.zeroed += 1;
                self.slots[slot] = event;
                slot
            }
            None => {
                self.slots.push(event);
                self.logged_at.push(0);
                self.slots.len() - 1
            }
        };
        let slots = &self.slots;
        self.ages.insert_live(slot, now, |s| slots[s].at);
        let in_order = self.sums.log.last().is_none_or(|&(at, _)| at <= now);
        if in_order && self.sums.zeroed <= self.slots.len() {
            self.logged_at[slot] = self.sums.log.len();
            self.sums.append(now, change);
        } else {
            self.rebuild_sums();
        }
    }

    /// The sums of the slots as they are, without zeroed entries.
    fn rebuild_sums(&mut self) {
        let mut order: Vec<usize> = (0..self.slots.len()).collect();
        order.sort_by_key(|&s| self.slots[s].at);
        self.sums = Sums::default();
        self.logged_at = vec![0; self.slots.len()];
        for slot in order {
            self.logged_at[slot] = self.sums.log.len();
            self.sums
                .append(self.slots[slot].at, self.slots[slot].change);
        }
    }
}

#[cfg(test)]
mod tests {
    //! The controller's walks, as written in Go, against the kept answers.
    use proptest::prelude::*;

    use super::*;

    fn walk_highest(slots: &[Recommendation], now: Millis, window: Millis) -> Option<i32> {
        slots
            .iter()
            .filter(|r| inside(r.at, now, window))
            .map(|r| r.replicas)
            .max()
    }

    fn walk_lowest(slots: &[Recommendation], now: Millis, window: Millis) -> Option<i32> {
        slots
            .iter()
            .filter(|r| inside(r.at, now, window))
            .map(|r| r.replicas)
            .min()
    }

    fn walk_record(slots: &mut Vec<Recommendation>, replicas: i32, now: Millis, expiry: Millis) {
        let entry = Recommendation { replicas, at: now };
        match slots.iter().rposition(|r| !inside(r.at, now, expiry)) {
            Some(slot) => slots[slot] = entry,
            None => slots.push(entry),
        }
    }

    fn walk_changes(events: &[ScaleEvent], period: Millis, now: Millis) -> i32 {
        events
            .iter()
            .filter(|e| inside(e.at, now, period))
            .fold(0_i32, |sum, e| sum.wrapping_add(e.change))
    }

    fn walk_store(events: &mut Vec<ScaleEvent>, change: i32, now: Millis, longest: Millis) {
        for event in events.iter_mut() {
            if !inside(event.at, now, longest) {
                event.outdated = true;
            }
        }
        let event = ScaleEvent {
            change,
            at: now,
            outdated: false,
        };
        match events.iter().rposition(|e| e.outdated) {
            Some(slot) => events[slot] = event,
            None => events.push(event),
        }
    }

    /// One sync: a time step (sometimes back, as only hand-made histories
    /// go), a recommendation, and maybe a scale event.
    fn syncs() -> impl Strategy<Value = Vec<(i64, i32, Option<i32>)>> {
        prop::collection::vec(
            (
                prop_oneof![8 => 0_i64..40, 1 => -60_i64..0],
                0_i32..12,
                prop::option::of(prop_oneof![1_i32..9, Just(i32::MAX)]),
            ),
            1..200,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn recommendations_answer_as_the_walk(
            syncs in syncs(),
            windows in (0_i64..50, 0_i64..50, 0_i64..50),
            probe in 0_i64..80,
            seed in prop::collection::vec((0_i32..12, -80_i64..20), 0..6),
        ) {
            let (up, down, legacy) = windows;
            let seed: Vec<Recommendation> =
                seed.iter().map(|&(replicas, at)| Recommendation { replicas, at }).collect();
            let (mut walked, mut behavior, mut old_path) =
                (seed.clone(), Recommendations::from(seed.clone()), Recommendations::from(seed.clone()));
            let mut legacy_walked = seed.clone();
            // Windows longer than the expiry too, which no path asks.
            let (mut probed, mut probed_walked) = (Recommendations::from(seed.clone()), seed);
            let mut now = 0;
            for (step, replicas, _) in syncs {
                now += step;
                prop_assert_eq!(behavior.lowest(now, up), walk_lowest(&walked, now, up));
                prop_assert_eq!(behavior.highest(now, down), walk_highest(&walked, now, down));
                behavior.record(replicas, now, up.max(down));
                walk_record(&mut walked, replicas, now, up.max(down));
                prop_assert_eq!(behavior.slots(), walked.as_slice());
                prop_assert_eq!(old_path.highest(now, legacy), walk_highest(&legacy_walked, now, legacy));
                old_path.record(replicas, now, legacy);
                walk_record(&mut legacy_walked, replicas, now, legacy);
                prop_assert_eq!(old_path.slots(), legacy_walked.as_slice());
                prop_assert_eq!(probed.highest(now, probe), walk_highest(&probed_walked, now, probe));
                prop_assert_eq!(probed.lowest(now, probe), walk_lowest(&probed_walked, now, probe));
                probed.record(replicas, now, legacy);
                walk_record(&mut probed_walked, replicas, now, legacy);
            }
        }

        #[test]
        fn scale_events_answer_as_the_walk(
            syncs in syncs(),
            longest in 0_i64..60,
            periods in prop::collection::vec(0_i64..90, 1..4),
            seed in prop::collection::vec((1_i32..9, -80_i64..20, any::<bool>()), 0..6),
        ) {
            let seed: Vec<ScaleEvent> = seed
                .iter()
                .map(|&(change, at, outdated)| ScaleEvent { change, at, outdated })
                .collect();
            let (mut walked, mut kept) = (seed.clone(), ScaleEvents::from(seed));
            let mut now = 0;
            for (step, _, change) in syncs {
                now += step;
                for &period in &periods {
                    prop_assert_eq!(kept.changes_within(period, now), walk_changes(&walked, period, now));
                }
                if let Some(change) = change {
                    kept.store(change, now, longest);
                    walk_store(&mut walked, change, now, longest);
                    prop_assert_eq!(kept.slots(), walked.as_slice());
                }
            }
        }
    }
}

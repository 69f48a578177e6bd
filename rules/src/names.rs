//! Identities held compactly: each string once, objects and references as
//! numbers into the strings. An input of many thousands of objects repeats
//! its namespaces, kinds and `apiVersion`s in every object, and its names in
//! the references between them.

use std::cmp::Ordering;
use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};

use crate::object::{KeyRef, ObjectKey, ObjectRef, group_of};

/// A string held in [`Names`]: its number there.
pub type Name = u32;

/// Strings, each held once, all in one buffer.
#[derive(Debug, Default)]
pub struct Names {
    text: String,
    /// Where each string ends in `text`.
    ends: Vec<u32>,
    /// The strings by hash, to find one again; emptied by [`Names::freeze`].
    table: HashTable<Name>,
    /// hashbrown's (foldhash, seeded per table): several times faster than
    /// the standard one on short strings, which names are.
    hasher: DefaultHashBuilder,
}

/// Up to this many strings are found again by comparing them one by one:
/// cheaper than hashing and growing a table for the few names of one
/// file's objects (each file's are gathered apart, then put together).
const FEW: usize = 16;

impl Names {
    /// The number of `s`, held from now on if it was not.
    pub fn add(&mut self, s: &str) -> Name {
        if self.table.is_empty() {
            if self.len() < FEW {
                return match (0..self.len()).find(|&n| self.get(position(n)) == s) {
                    Some(n) => position(n),
                    None => self.push(s),
                };
            }
            // Past a few strings (or added to after `freeze`): a table.
            self.fill_table();
        }
        let hash = self.hasher.hash_one(s);
        let found = self
            .table
            .find(hash, |&name| string(&self.text, &self.ends, name) == s);
        if let Some(&name) = found {
            return name;
        }
        let name = self.push(s);
        let Self {
            text,
            ends,
            table,
            hasher,
        } = self;
        table.insert_unique(hash, name, |&name| {
            hasher.hash_one(string(text, ends, name))
        });
        name
    }

    /// Finds every string held through the table.
    fn fill_table(&mut self) {
        let Self {
            text,
            ends,
            table,
            hasher,
        } = self;
        let hash = |name: Name| hasher.hash_one(string(text, ends, name));
        for name in (0..ends.len()).map(position) {
            table.insert_unique(hash(name), name, |&name| hash(name));
        }
    }

    /// Holds `s` as a new string, without a table.
    fn push(&mut self, s: &str) -> Name {
        let name = position(self.ends.len());
        self.text.push_str(s);
        self.ends
            .push(u32::try_from(self.text.len()).expect("less than 4 GiB of names"));
        name
    }

    /// The string numbered `name`.
    #[inline]
    pub fn get(&self, name: Name) -> &str {
        string(&self.text, &self.ends, name)
    }

    /// Lets go of spare room.
    pub fn shrink_to_fit(&mut self) {
        let Self {
            text,
            ends,
            table,
            hasher,
        } = self;
        text.shrink_to_fit();
        ends.shrink_to_fit();
        table.shrink_to_fit(|&name| hasher.hash_one(string(text, ends, name)));
    }

    /// Lets go of what adding strings needs, once all are added.
    pub fn freeze(&mut self) {
        self.table = HashTable::new();
        self.shrink_to_fit();
    }

    /// How many strings there are.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The identity of an object, held here.
    pub fn key(&mut self, key: &ObjectKey) -> Key {
        self.identity(key.as_ref())
    }

    /// [`Names::key`], borrowed.
    pub fn identity(&mut self, key: KeyRef<'_>) -> Key {
        Key {
            api_version: self.add(key.api_version),
            kind: self.add(key.kind),
            namespace: self.add(key.namespace),
            name: self.add(key.name),
        }
    }

    /// A reference, held here.
    pub fn reference(&mut self, reference: &ObjectRef) -> Ref {
        Ref {
            group: self.add(&reference.group),
            kind: self.add(&reference.kind),
            namespace: self.add(&reference.namespace),
            name: self.add(&reference.name),
        }
    }
}

/// The number of the `n`-th string.
fn position(n: usize) -> Name {
    Name::try_from(n).expect("fewer than 2³² strings")
}

#[inline]
fn string<'t>(text: &'t str, ends: &[u32], name: Name) -> &'t str {
    let i = name as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    &text[start..ends[i] as usize]
}

/// An object's identity ([`ObjectKey`]) in [`Names`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    api_version: Name,
    kind: Name,
    namespace: Name,
    name: Name,
}

impl Key {
    /// The same numbers in other [`Names`]: `to[n]` is the number of `n`.
    #[must_use]
    pub fn renumbered(self, to: &[Name]) -> Self {
        Self {
            api_version: to[self.api_version as usize],
            kind: to[self.kind as usize],
            namespace: to[self.namespace as usize],
            name: to[self.name as usize],
        }
    }

    /// The namespace.
    pub fn namespace(self) -> Name {
        self.namespace
    }

    /// The identity as strings.
    pub fn get(self, names: &Names) -> ObjectKey {
        ObjectKey {
            api_version: names.get(self.api_version).to_owned(),
            kind: names.get(self.kind).to_owned(),
            namespace: names.get(self.namespace).to_owned(),
            name: names.get(self.name).to_owned(),
        }
    }

    /// The reference to the object, as [`Parts`].
    pub fn parts(self, names: &Names) -> Parts<'_> {
        Parts {
            name: names.get(self.name),
            kind: names.get(self.kind),
            namespace: names.get(self.namespace),
            group: Group::Of(names.get(self.api_version)),
        }
    }

    /// [`Parts`]' order, without reading strings found equal by number.
    pub fn cmp_in(self, other: Key, names: &Names) -> Ordering {
        let by = |a, b| compare(names, a, b);
        by(self.name, other.name)
            .then_with(|| by(self.kind, other.kind))
            .then_with(|| by(self.namespace, other.namespace))
            .then_with(|| self.cmp_group(other, names))
    }

    /// Orders identities by where their objects are listed: namespace,
    /// kind, then group; strings found equal by number are not read.
    pub fn cmp_listing(self, other: Key, names: &Names) -> Ordering {
        let by = |a, b| compare(names, a, b);
        by(self.namespace, other.namespace)
            .then_with(|| by(self.kind, other.kind))
            .then_with(|| self.cmp_group(other, names))
    }

    /// [`Parts`]' order against a reference, reading strings only as far
    /// as they decide.
    pub fn cmp_ref(self, target: &ObjectRef, names: &Names) -> Ordering {
        let by = |name: Name, s: &str| names.get(name).cmp(s);
        by(self.name, &target.name)
            .then_with(|| by(self.kind, &target.kind))
            .then_with(|| by(self.namespace, &target.namespace))
            .then_with(|| group_of(names.get(self.api_version)).cmp(&target.group))
    }

    /// Whether the object is listed with `other` because it has the same
    /// namespace, kind and `apiVersion` (another version of the group is
    /// listed with it too: [`Key::cmp_listing`] tells).
    pub fn is_listed_with(self, other: Key) -> bool {
        (self.namespace, self.kind, self.api_version)
            == (other.namespace, other.kind, other.api_version)
    }

    /// [`Key::cmp_listing`]'s order against a listing, reading strings only
    /// as far as they decide.
    pub fn cmp_listed(self, namespace: &str, group: &str, kind: &str, names: &Names) -> Ordering {
        let by = |name: Name, s: &str| names.get(name).cmp(s);
        by(self.namespace, namespace)
            .then_with(|| by(self.kind, kind))
            .then_with(|| group_of(names.get(self.api_version)).cmp(group))
    }

    fn cmp_group(self, other: Key, names: &Names) -> Ordering {
        if self.api_version == other.api_version {
            return Ordering::Equal;
        }
        let group = |key: Key| group_of(names.get(key.api_version));
        group(self).cmp(group(other))
    }
}

/// Two strings of `names` in order; one number is one string.
fn compare(names: &Names, a: Name, b: Name) -> Ordering {
    if a == b {
        Ordering::Equal
    } else {
        names.get(a).cmp(names.get(b))
    }
}

/// The order of the strings of [`Names`] as numbers, worked out once to sort
/// many identities and references: numbers compare as their strings do, and
/// identities and references as by [`Key::cmp_in`], [`Key::cmp_listing`]
/// and [`Ref::cmp_in`].
pub struct Ranks {
    /// Each string's place among all, in order.
    places: Vec<u32>,
    /// The `apiVersion`s of the keys given, each with its group's place
    /// among their groups; by number.
    groups: Vec<(Name, u32)>,
}

impl Ranks {
    /// The ranks of `names`, and of the groups of `keys`' `apiVersion`s.
    pub fn new(names: &Names, keys: &[Key]) -> Self {
        // Most strings differ in their first bytes: compared as one number,
        // the strings are read only where those are the same.
        let mut sorted: Vec<(u64, Name)> = (0..names.len())
            .map(|n| (head(names.get(position(n))), position(n)))
            .collect();
        sorted.sort_unstable_by(|&(a_head, a), &(b_head, b)| {
            a_head
                .cmp(&b_head)
                .then_with(|| names.get(a).cmp(names.get(b)))
        });
        let mut places: Vec<u32> = sorted.into_iter().map(|(_, name)| name).collect();
        invert(&mut places);
        let mut versions: Vec<Name> = keys.iter().map(|key| key.api_version).collect();
        versions.sort_unstable();
        versions.dedup();
        let group = |name: Name| group_of(names.get(name));
        versions.sort_by(|&a, &b| group(a).cmp(group(b)));
        let mut groups: Vec<(Name, u32)> = Vec::with_capacity(versions.len());
        for (i, &version) in versions.iter().enumerate() {
            let place = match groups.last() {
                Some(&(before, place)) if group(before) == group(version) => place,
                _ => position(i),
            };
            groups.push((version, place));
        }
        groups.sort_unstable();
        Self { places, groups }
    }

    /// A string's place among all.
    fn place(&self, name: Name) -> u32 {
        self.places[name as usize]
    }

    /// The place of a key's group among the groups of the keys'
    /// `apiVersion`s.
    fn group(&self, key: Key) -> u32 {
        let at = self
            .groups
            .binary_search_by_key(&key.api_version, |&(version, _)| version)
            .expect("the keys' versions are ranked");
        self.groups[at].1
    }

    /// [`Key::cmp_in`]'s order as one number, worked out once for a key
    /// that a sort compares many times: keys compare as their numbers do.
    pub fn in_order(&self, key: Key) -> u128 {
        one_number([
            self.place(key.name),
            self.place(key.kind),
            self.place(key.namespace),
            self.group(key),
        ])
    }

    /// [`Key::cmp_listing`]'s order as one number (see [`Ranks::in_order`]).
    pub fn listing_order(&self, key: Key) -> u128 {
        one_number([
            self.place(key.namespace),
            self.place(key.kind),
            self.group(key),
            0,
        ])
    }

    /// [`Ref::cmp_in`]'s order as one number (see [`Ranks::in_order`]).
    pub fn ref_order(&self, reference: Ref) -> u128 {
        one_number([
            self.place(reference.name),
            self.place(reference.kind),
            self.place(reference.namespace),
            self.place(reference.group),
        ])
    }
}

/// Places compared one after the other, as one number that compares so.
fn one_number(places: [u32; 4]) -> u128 {
    places
        .iter()
        .fold(0, |number, &place| number << 32 | u128::from(place))
}

/// The first eight bytes of a string (zeros past its end) as a number that
/// compares as they do: strings whose heads differ are in their order.
fn head(s: &str) -> u64 {
    let mut bytes = [0; 8];
    let n = s.len().min(8);
    bytes[..n].copy_from_slice(&s.as_bytes()[..n]);
    u64::from_be_bytes(bytes)
}

/// Turns a permutation (`p[i]` is where `i` goes) into its inverse in
/// place, without a second list: an index may hold many strings.
fn invert(p: &mut [u32]) {
    const DONE: u32 = 1 << 31;
    assert!(p.len() <= DONE as usize, "fewer than 2³¹ strings");
    for start in 0..p.len() {
        if p[start] & DONE != 0 {
            continue;
        }
        // Along the cycle through `start`, each element points back.
        let (mut from, mut at) = (position(start), p[start] as usize);
        while at != start {
            let next = p[at] as usize;
            p[at] = from | DONE;
            from = position(at);
            at = next;
        }
        p[start] = from | DONE;
    }
    for place in p.iter_mut() {
        *place &= !DONE;
    }
}

/// A reference ([`ObjectRef`]) in [`Names`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ref {
    group: Name,
    kind: Name,
    namespace: Name,
    name: Name,
}

impl Ref {
    /// The same numbers in other [`Names`]: `to[n]` is the number of `n`.
    #[must_use]
    pub fn renumbered(self, to: &[Name]) -> Self {
        Self {
            group: to[self.group as usize],
            kind: to[self.kind as usize],
            namespace: to[self.namespace as usize],
            name: to[self.name as usize],
        }
    }

    /// The reference as [`Parts`].
    pub fn parts(self, names: &Names) -> Parts<'_> {
        Parts {
            name: names.get(self.name),
            kind: names.get(self.kind),
            namespace: names.get(self.namespace),
            group: Group::Is(names.get(self.group)),
        }
    }

    /// [`Parts`]' order against a reference, reading strings only as far
    /// as they decide.
    pub fn cmp_ref(self, target: &ObjectRef, names: &Names) -> Ordering {
        let by = |name: Name, s: &str| names.get(name).cmp(s);
        by(self.name, &target.name)
            .then_with(|| by(self.kind, &target.kind))
            .then_with(|| by(self.namespace, &target.namespace))
            .then_with(|| by(self.group, &target.group))
    }

    /// [`Parts`]' order, without reading strings found equal by number.
    pub fn cmp_in(self, other: Ref, names: &Names) -> Ordering {
        let by = |a, b| compare(names, a, b);
        by(self.name, other.name)
            .then_with(|| by(self.kind, other.kind))
            .then_with(|| by(self.namespace, other.namespace))
            .then_with(|| by(self.group, other.group))
    }
}

/// A reference as strings, in the order references are sorted in: name,
/// kind, namespace, then group (names tell most objects apart; the group is
/// read out of an `apiVersion` only when the rest is equal).
#[derive(Clone, Copy, Debug)]
pub struct Parts<'a> {
    /// Name.
    pub name: &'a str,
    /// Kind.
    pub kind: &'a str,
    /// Namespace.
    pub namespace: &'a str,
    group: Group<'a>,
}

/// An API group, or the `apiVersion` it is read out of.
#[derive(Clone, Copy, Debug)]
enum Group<'a> {
    Is(&'a str),
    Of(&'a str),
}

impl<'a> Parts<'a> {
    /// The parts of a reference.
    pub fn of(reference: &'a ObjectRef) -> Self {
        Self {
            name: &reference.name,
            kind: &reference.kind,
            namespace: &reference.namespace,
            group: Group::Is(&reference.group),
        }
    }

    /// The parts of a reference to an object.
    pub fn of_key(key: &'a ObjectKey) -> Self {
        Self {
            name: &key.name,
            kind: &key.kind,
            namespace: &key.namespace,
            group: Group::Of(&key.api_version),
        }
    }

    /// API group.
    pub fn group(self) -> &'a str {
        match self.group {
            Group::Is(group) => group,
            Group::Of(api_version) => group_of(api_version),
        }
    }
}

impl Ord for Parts<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.name, self.kind, self.namespace)
            .cmp(&(other.name, other.kind, other.namespace))
            .then_with(|| self.group().cmp(other.group()))
    }
}

impl PartialOrd for Parts<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Parts<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Parts<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_strings_are_found_again_before_and_after_freezing() {
        let mut names = Names::default();
        let strings: Vec<String> = (0..3 * FEW).map(|i| format!("name-{i}")).collect();
        for (i, s) in strings.iter().enumerate() {
            assert_eq!(names.add(s), position(i));
            // Each string added so far is found again, by comparison while
            // there are few, through the table after.
            assert_eq!(names.add(&strings[i / 2]), position(i / 2));
        }
        names.freeze();
        assert_eq!(names.add(&strings[FEW + 1]), position(FEW + 1));
        assert_eq!(names.add("new"), position(3 * FEW));
        assert_eq!(names.get(position(3 * FEW)), "new");
        let mut few = Names::default();
        few.add("a");
        few.freeze();
        assert_eq!((few.add("a"), few.add("b"), few.len()), (0, 1, 2));
    }

    #[test]
    fn permutations_are_inverted_in_place() {
        for p in [
            vec![],
            vec![0],
            vec![2, 0, 1, 3],
            vec![4, 3, 2, 1, 0],
            vec![1, 0, 3, 4, 2],
        ] {
            let mut inverse = p.clone();
            invert(&mut inverse);
            for (i, &to) in p.iter().enumerate() {
                assert_eq!(inverse[to as usize] as usize, i, "{p:?}");
            }
        }
    }

    #[test]
    fn ranks_order_as_the_strings_do() {
        let mut names = Names::default();
        let parts = ["a", "a.b", "b", "", "a-b", "é", "B"];
        let versions = ["v1", "a/v1", "a.b/v1", "a/v2", "apps/v1", "a.b/v2", "/v1"];
        let mut keys = Vec::new();
        let mut refs = Vec::new();
        for (i, version) in versions.iter().enumerate() {
            for (j, name) in parts.iter().enumerate() {
                let key = ObjectKey {
                    api_version: (*version).into(),
                    kind: parts[(i + j) % parts.len()].into(),
                    namespace: parts[(i * j) % parts.len()].into(),
                    name: (*name).into(),
                };
                keys.push(names.key(&key));
                refs.push(names.reference(&key.to_ref()));
            }
        }
        names.freeze();
        let ranks = Ranks::new(&names, &keys);
        assert_keys_rank_as_they_compare(&names, &ranks, &keys);
        for &a in &refs {
            for &b in &refs {
                assert_eq!(
                    ranks.ref_order(a).cmp(&ranks.ref_order(b)),
                    a.cmp_in(b, &names)
                );
            }
        }
    }

    /// Strings that share their first eight bytes, or end within them, are
    /// ranked as they compare.
    #[test]
    fn strings_alike_at_their_start_rank_as_they_compare() {
        let mut names = Names::default();
        let strings = [
            "frontend-b",
            "frontend-a",
            "frontend",
            "front",
            "frontend\0",
            "frontenda",
            "",
        ];
        let keys: Vec<Key> = strings
            .iter()
            .map(|name| {
                names.key(&ObjectKey {
                    name: (*name).into(),
                    ..ObjectKey::default()
                })
            })
            .collect();
        names.freeze();
        let ranks = Ranks::new(&names, &keys);
        assert_keys_rank_as_they_compare(&names, &ranks, &keys);
    }

    /// Every two of `keys` are in the same order by their ranks as by
    /// their strings, in both orders a key has.
    fn assert_keys_rank_as_they_compare(names: &Names, ranks: &Ranks, keys: &[Key]) {
        for &a in keys {
            for &b in keys {
                assert_eq!(
                    ranks.in_order(a).cmp(&ranks.in_order(b)),
                    a.cmp_in(b, names)
                );
                assert_eq!(
                    ranks.listing_order(a).cmp(&ranks.listing_order(b)),
                    a.cmp_listing(b, names)
                );
            }
        }
    }

    #[test]
    fn each_string_is_held_once_and_found_again() {
        let mut names = Names::default();
        let key = ObjectKey {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: "shop".into(),
            name: "shop".into(),
        };
        let compact = names.key(&key);
        assert_eq!(names.len(), 3);
        assert_eq!(names.add(""), 3);
        assert_eq!(names.add("apps/v1"), 0);
        names.freeze();
        assert_eq!(compact.get(&names), key);
        assert_eq!(names.get(3), "");
        let parts = compact.parts(&names);
        assert_eq!((parts.group(), parts.name), ("apps", "shop"));
        assert_eq!(parts, Parts::of(&key.to_ref()));
        let other = names.key(&ObjectKey {
            api_version: "apps/v2".into(),
            ..key.clone()
        });
        // Another version of one group: the same reference.
        assert!(compact.cmp_in(other, &names).is_eq());
        assert!(compact.cmp_listing(other, &names).is_eq());
        assert!(other.cmp_ref(&key.to_ref(), &names).is_eq());
        assert!(
            other
                .cmp_listed("shop", "apps", "Deployment", &names)
                .is_eq()
        );
        assert!(
            other
                .cmp_listed("shop", "apps", "StatefulSet", &names)
                .is_lt()
        );
    }
}

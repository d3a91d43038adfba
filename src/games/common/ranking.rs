//! Ranking with tie-breaks, shared by every game's scoring (majorities, winners, payouts).

use std::cmp::Ordering;

/// Groups `items` from best to worst by `compare` (which returns `Greater` for the better item).
/// Items that compare `Equal` share a group, in their original order. Tie-breaks are expressed by
/// comparing further keys inside `compare` (e.g. money, then Florence position).
pub fn rank_groups<T: Clone>(items: &[T], compare: impl Fn(&T, &T) -> Ordering) -> Vec<Vec<T>> {
    let mut sorted: Vec<T> = items.to_vec();
    // Stable sort keeps equal items in their original (seat) order.
    sorted.sort_by(|a, b| compare(b, a));
    let mut groups: Vec<Vec<T>> = Vec::new();
    for item in sorted {
        match groups.last_mut() {
            Some(group) if compare(&group[0], &item) == Ordering::Equal => group.push(item),
            _ => groups.push(vec![item]),
        }
    }
    groups
}

/// The best group (all items tied for first), or empty when `items` is empty.
pub fn top_group<T: Clone>(items: &[T], compare: impl Fn(&T, &T) -> Ordering) -> Vec<T> {
    rank_groups(items, compare)
        .into_iter()
        .next()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_share_a_group_and_keep_seat_order() {
        let scores = [(0, 10), (1, 30), (2, 10), (3, 20)];
        let groups = rank_groups(&scores, |a, b| a.1.cmp(&b.1));
        assert_eq!(
            groups,
            vec![vec![(1, 30)], vec![(3, 20)], vec![(0, 10), (2, 10)]]
        );
    }

    #[test]
    fn a_tie_break_key_splits_a_tie() {
        let players = [(0, 10, 1), (1, 10, 5)];
        let best = top_group(&players, |a, b| a.1.cmp(&b.1).then(a.2.cmp(&b.2)));
        assert_eq!(best, vec![(1, 10, 5)]);
    }
}

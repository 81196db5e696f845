//! Replica arithmetic: Karmada's static-weight division (floor shares, remainder one by one
//! by weight then name) and KubeFed's ReplicaSchedulingPreference planner (minimums, then
//! weighted rounds with ceilings and maximums, ties broken by FNV-32 of cluster and key).
//! Pure integer functions; they must not know about documents or policies.

/// Splits `total` over candidates with static weights, as Karmada's dispenser does: each gets
/// `weight * total / sum` (floored); the remainder goes one replica at a time to candidates in
/// order of weight (descending), then name (ascending). Upstream breaks equal-weight ties at
/// random; flotilla uses the name so a render is reproducible.
///
/// Returns the replicas in the same order as `candidates` (`(name, weight)`).
pub fn divide_by_static_weight(total: i64, candidates: &[(&str, i64)]) -> Vec<i64> {
    let mut out = vec![0; candidates.len()];
    // i128 keeps the sum and `weight * total` exact for any i64 input, so the shares never
    // add up to more than `total`.
    let sum: i128 = candidates
        .iter()
        .map(|(_, w)| i128::from((*w).max(0)))
        .sum();
    if sum <= 0 || total <= 0 {
        return out;
    }
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&a, &b| {
        candidates[b]
            .1
            .cmp(&candidates[a].1)
            .then_with(|| candidates[a].0.cmp(candidates[b].0))
    });
    let mut remain = total;
    for &i in &order {
        let share = i64::try_from(i128::from(candidates[i].1.max(0)) * i128::from(total) / sum)
            .unwrap_or(total);
        out[i] = share;
        remain -= share;
    }
    for &i in &order {
        if remain <= 0 {
            break;
        }
        out[i] += 1;
        remain -= 1;
    }
    out
}

/// One cluster's entry in a ReplicaSchedulingPreference (`clusters: {name: {...}}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RspPreference {
    pub min_replicas: i64,
    pub max_replicas: Option<i64>,
    pub weight: i64,
}

/// FNV-1 (32-bit), the hash KubeFed's planner uses to order clusters of equal weight.
pub fn fnv1_32(parts: &[&str]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for part in parts {
        for byte in part.bytes() {
            hash = hash.wrapping_mul(0x0100_0193);
            hash ^= u32::from(byte);
        }
    }
    hash
}

/// KubeFed's planner without live state (no current replicas, no capacity estimate): every
/// available cluster gets its preference (its own entry, else `*`, else 0 replicas); minimums
/// first, then rounds that share what is left by weight, rounding up, capped by maximums.
/// `key` is `namespace/name` of the federated object. Returns replicas in input order.
pub fn kubefed_plan(total: i64, clusters: &[(&str, Option<RspPreference>)], key: &str) -> Vec<i64> {
    let mut plan = vec![0_i64; clusters.len()];
    let mut prefs: Vec<(usize, u32, RspPreference)> = clusters
        .iter()
        .enumerate()
        .filter_map(|(i, (name, pref))| pref.map(|p| (i, fnv1_32(&[name, key]), p)))
        .collect();
    prefs.sort_by(|a, b| b.2.weight.cmp(&a.2.weight).then(a.1.cmp(&b.1)));
    let mut remaining = total.max(0);
    for (i, _, p) in &prefs {
        let min = p.min_replicas.max(0).min(remaining);
        remaining -= min;
        plan[*i] = min;
    }
    let mut modified = true;
    while modified && remaining > 0 {
        modified = false;
        let weight_sum: i64 = prefs
            .iter()
            .fold(0_i64, |acc, (_, _, p)| acc.saturating_add(p.weight.max(0)));
        let distribute = remaining;
        let mut next = Vec::with_capacity(prefs.len());
        for (i, hash, p) in &prefs {
            if weight_sum <= 0 {
                break;
            }
            let start = plan[*i];
            let extra = (distribute
                .saturating_mul(p.weight.max(0))
                .saturating_add(weight_sum - 1)
                / weight_sum)
                .min(remaining);
            let mut total_here = start.saturating_add(extra);
            let mut full = false;
            if let Some(max) = p.max_replicas
                && total_here > max
            {
                total_here = max.max(start);
                full = true;
            }
            if !full {
                next.push((*i, *hash, *p));
            }
            remaining -= total_here - start;
            plan[*i] = total_here;
            if total_here > start {
                modified = true;
            }
        }
        prefs = next;
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    type Case = (i64, Vec<(&'static str, i64)>, Vec<i64>);

    #[test]
    fn static_weight_table() {
        let cases: Vec<Case> = vec![
            (9, vec![("a", 1), ("b", 2)], vec![3, 6]),
            (10, vec![("a", 1), ("b", 1), ("c", 1)], vec![4, 3, 3]),
            (10, vec![("c", 1), ("b", 1), ("a", 1)], vec![3, 3, 4]),
            (7, vec![("a", 1), ("b", 3)], vec![1, 6]),
            (1, vec![("a", 1), ("b", 1)], vec![1, 0]),
            (0, vec![("a", 1)], vec![0]),
            (5, vec![("a", 0), ("b", 0)], vec![0, 0]),
        ];
        for (total, weights, want) in cases {
            assert_eq!(
                divide_by_static_weight(total, &weights),
                want,
                "{total} {weights:?}"
            );
        }
    }

    #[test]
    fn fnv_matches_the_reference_values() {
        // FNV-1 32-bit of "" is the offset basis; of "a" is 0x050c5d7e.
        assert_eq!(fnv1_32(&[""]), 0x811c_9dc5);
        assert_eq!(fnv1_32(&["a"]), 0x050c_5d7e);
        assert_eq!(fnv1_32(&["a", "b"]), fnv1_32(&["ab"]));
    }

    #[test]
    fn kubefed_plan_table() {
        let w = |weight| {
            Some(RspPreference {
                min_replicas: 0,
                max_replicas: None,
                weight,
            })
        };
        // equal weights: 9 over 3 clusters
        let got = kubefed_plan(9, &[("a", w(1)), ("b", w(1)), ("c", w(1))], "ns/x");
        assert_eq!(got, vec![3, 3, 3]);
        // no entry = 0 replicas
        let got = kubefed_plan(6, &[("a", w(1)), ("b", None)], "ns/x");
        assert_eq!(got, vec![6, 0]);
        // min and max respected, the rest flows to the others
        let capped = Some(RspPreference {
            min_replicas: 2,
            max_replicas: Some(3),
            weight: 10,
        });
        let got = kubefed_plan(10, &[("a", capped), ("b", w(1))], "ns/x");
        assert_eq!(got, vec![3, 7]);
        // sums always match the total when someone can take replicas
        let got = kubefed_plan(7, &[("a", w(2)), ("b", w(1)), ("c", w(1))], "ns/web");
        assert_eq!(got.iter().sum::<i64>(), 7);
        assert!(got[0] >= got[1] && got[0] >= got[2]);
    }

    #[test]
    fn weights_whose_sum_overflows_i64_still_divide_exactly_the_total() {
        let out = divide_by_static_weight(5, &[("a", i64::MAX), ("b", i64::MAX)]);
        assert_eq!(out.iter().sum::<i64>(), 5, "{out:?}");
        assert_eq!(out, [3, 2]);
    }
}

//! A plan to reach a grade: the smallest set of open findings whose fix takes the rating
//! to a target score, exact under the method (the rating is a pure function of the
//! findings, so the plan is found, not guessed).
//!
//! - A cap below the target is lifted only by fixing every finding that sets it: those
//!   are in the plan whatever they cost.
//! - The remaining fixes raise the weighted mean of the components. Within a component,
//!   its score falls with the sum of its points, so `k` fixes there do best on its `k`
//!   costliest findings; web_headers sums per origin (each clamped at 100), so its best
//!   `k` are found by a small knapsack over its origins. Across components a knapsack
//!   over the number of fixes finds, for each count, the largest weighted mean; the plan
//!   is the smallest count that reaches the target (the largest mean among equals),
//!   checked by rating the findings without it.
//! - The steps are ordered to raise the score soonest: in turn, the fix (or the fixes
//!   that lift one cap together) adding the most per fix, with the score after each.

use std::collections::BTreeMap;

use model::{Finding, Grade, RiskVector};

use crate::{Input, cap_setters, finding_points, grade_of, rate, weight_of};

/// One fix of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The finding's index in the input.
    pub finding: usize,
    /// What fixing it alone would gain (points of the global score).
    pub gain: f64,
    /// The score and grade once it and every step before it are fixed.
    pub score_after: f64,
    pub grade_after: Grade,
    /// It sets a cap below the target: the target needs it fixed whatever it weighs.
    pub lifts_cap: Option<&'static str>,
}

/// For each number of fixes in one component, the component's best score and the fixes
/// (indices into the input) that give it.
type Options = Vec<(f64, Vec<usize>)>;

/// The answer of [`plan`].
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// The rating is at the target already.
    Reached { score: f64 },
    /// Fix these, in this order: the last step's score is at least the target.
    Steps { score: f64, steps: Vec<Step> },
    /// No fix can reach it, and why.
    Unreachable { why: String },
}

/// Most findings a plan considers (a company has far fewer open; more is refused, not
/// slow).
pub const MAX_FINDINGS: usize = 5_000;

/// The plan that takes `input`'s rating to at least `target` (0–100).
pub fn plan(input: &Input<'_>, target: f64) -> Plan {
    if input.findings.len() > MAX_FINDINGS {
        return Plan::Unreachable { why: format!("more than {MAX_FINDINGS} open findings: plan in parts") };
    }
    let now = rate(input);
    let Some(score) = now.score else {
        return Plan::Unreachable { why: "no component could be assessed: there is no rating to raise".into() };
    };
    if score >= target {
        return Plan::Reached { score };
    }
    if target > 100.0 {
        return Plan::Unreachable { why: "no rating is above 100".into() };
    }
    // Caps below the target: every finding that sets one is fixed.
    let mut forced: BTreeMap<usize, &'static str> = BTreeMap::new();
    for (reason, max, setters) in cap_setters(input) {
        if max < target {
            for i in setters {
                forced.entry(i).or_insert(reason);
            }
        }
    }
    // Per assessable component, the best score for each number of further fixes, and
    // which fixes give it.
    let mut options: Vec<(f64, Options)> = Vec::new();
    for c in &now.components {
        if c.score.is_none() {
            continue;
        }
        let v = c.risk_vector;
        let open: Vec<(usize, f64)> = input
            .findings
            .iter()
            .enumerate()
            .filter(|(i, f)| f.risk_vector == v && !forced.contains_key(i))
            .map(|(i, f)| (i, finding_points(f)))
            .filter(|(_, p)| *p > 0.0)
            .collect();
        let table = if v == RiskVector::WebHeaders {
            web_options(input, &open, c.assets_checked)
        } else {
            sum_options(&open, c.assets_checked)
        };
        options.push((weight_of(v), table));
    }
    // best[k]: the largest weighted sum with k fixes over the components so far, and
    // how many each component takes.
    let mut best: Vec<Option<(f64, Vec<usize>)>> = vec![Some((0.0, Vec::new()))];
    for (w, table) in &options {
        let mut next: Vec<Option<(f64, Vec<usize>)>> = vec![None; best.len() + table.len() - 1];
        for (k, b) in best.iter().enumerate() {
            let Some((sum, picks)) = b else { continue };
            for (j, (s, _)) in table.iter().enumerate() {
                let value = sum + w * s;
                let slot = &mut next[k + j];
                if slot.as_ref().is_none_or(|(v, _)| value > *v) {
                    let mut p = picks.clone();
                    p.push(j);
                    *slot = Some((value, p));
                }
            }
        }
        best = next;
    }
    for b in &best {
        let Some((_, picks)) = b else { continue };
        let mut fixed: Vec<usize> = forced.keys().copied().collect();
        for ((_, table), j) in options.iter().zip(picks) {
            fixed.extend(&table[*j].1);
        }
        // Checked by the method itself (the sums above are the rating's, in another order).
        if let Some(after) = score_without(input, &fixed)
            && after >= target
        {
            return Plan::Steps { score, steps: ordered(input, score, &fixed, &forced) };
        }
    }
    Plan::Unreachable { why: "fixing every open finding does not reach it".into() }
}

/// The rating's score without the findings `fixed` (indices into the input).
fn score_without(input: &Input<'_>, fixed: &[usize]) -> Option<f64> {
    let left: Vec<Finding> =
        input.findings.iter().enumerate().filter(|(i, _)| !fixed.contains(i)).map(|(_, f)| f.clone()).collect();
    rate(&Input { findings: &left, ..*input }).score
}

/// A component whose score falls with the sum of its points: `k` fixes take its `k`
/// costliest findings.
fn sum_options(open: &[(usize, f64)], assets: u32) -> Options {
    let mut sorted = open.to_vec();
    sorted.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let all: f64 = sorted.iter().map(|(_, p)| p).sum();
    let mut removed = 0.0;
    let mut out = vec![(crate::component_score(all, assets), Vec::new())];
    for k in 0..sorted.len() {
        removed += sorted[k].1;
        out.push((
            crate::component_score((all - removed).max(0.0), assets),
            sorted[..=k].iter().map(|x| x.0).collect(),
        ));
    }
    out
}

/// web_headers: per origin (host), its points clamped at 100, the sum over origins
/// divided by the origins assessed (or the origins with findings, when more). `k` fixes
/// are shared among the origins by a knapsack over them — each origin's `j` best being
/// its `j` costliest — that also counts the origins left without findings.
fn web_options(input: &Input<'_>, open: &[(usize, f64)], origins: u32) -> Options {
    let mut by_host: BTreeMap<String, Vec<(usize, f64)>> = BTreeMap::new();
    for (i, p) in open {
        let asset = &input.findings[*i].asset;
        let host = asset.split_once("://").map_or(asset.as_str(), |(_, rest)| rest);
        let host = host.split(['/', ':']).next().unwrap_or(host).to_ascii_lowercase();
        by_host.entry(host).or_default().push((*i, *p));
    }
    let hosts = by_host.len();
    // lost[k][e]: the least points lost (the sum over origins of min(100, points left))
    // with k fixes that leave e origins without findings, and the fixes.
    type Cell = Option<(f64, Vec<usize>)>;
    let mut lost: Vec<Vec<Cell>> = vec![vec![Some((0.0, Vec::new()))]];
    for list in by_host.values_mut() {
        list.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let all: f64 = list.iter().map(|(_, p)| p).sum();
        let mut removed = 0.0;
        let mut host: Vec<f64> = vec![all.min(100.0)];
        for (_, p) in list.iter() {
            removed += p;
            host.push((all - removed).clamp(0.0, 100.0));
        }
        let width = lost.first().map_or(1, Vec::len) + 1;
        let mut next: Vec<Vec<Cell>> = vec![vec![None; width]; lost.len() + list.len()];
        for (k, row) in lost.iter().enumerate() {
            for (e, cell) in row.iter().enumerate() {
                let Some((sum, picks)) = cell else { continue };
                for (j, h) in host.iter().enumerate() {
                    let emptied = e + usize::from(j == list.len());
                    let value = sum + h;
                    let slot = &mut next[k + j][emptied];
                    if slot.as_ref().is_none_or(|(v, _)| value < *v) {
                        let mut p = picks.clone();
                        p.extend(list[..j].iter().map(|x| x.0));
                        *slot = Some((value, p));
                    }
                }
            }
        }
        lost = next;
    }
    lost.into_iter()
        .map(|row| {
            row.into_iter()
                .enumerate()
                .filter_map(|(e, cell)| {
                    let (l, picks) = cell?;
                    let n = f64::from(origins).max((hosts - e) as f64).max(1.0);
                    Some((((100.0 - l / n) * 10.0).round() / 10.0, picks))
                })
                .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.len().cmp(&a.1.len())))
                .map(|(s, picks)| (s.clamp(0.0, 100.0), picks))
                .unwrap_or((0.0, Vec::new()))
        })
        .collect()
}

/// Most units (a fix, or the fixes that lift one cap together) ordered by what they add
/// in turn; a larger plan is ordered by what each fix alone gains.
const ORDERED_UNITS: usize = 300;

/// The fixes in the order that raises the score soonest: in turn, the unit that adds the
/// most per fix to what is fixed already — a single fix, or every fix that lifts one
/// cap (they gain nothing apart) — each with the score after it and all before it.
fn ordered(input: &Input<'_>, score: f64, fixed: &[usize], forced: &BTreeMap<usize, &'static str>) -> Vec<Step> {
    let alone: BTreeMap<usize, f64> =
        fixed.iter().map(|&i| (i, score_without(input, &[i]).unwrap_or(score) - score)).collect();
    let points = |i: usize| finding_points(&input.findings[i]);
    let mut units: Vec<Vec<usize>> = fixed.iter().filter(|i| !forced.contains_key(i)).map(|&i| vec![i]).collect();
    let mut by_cap: BTreeMap<&'static str, Vec<usize>> = BTreeMap::new();
    for (&i, &reason) in forced {
        if fixed.contains(&i) {
            by_cap.entry(reason).or_default().push(i);
        }
    }
    for mut block in by_cap.into_values() {
        block.sort_by(|a, b| points(*b).total_cmp(&points(*a)).then(a.cmp(b)));
        units.push(block);
    }
    let mut order: Vec<usize> = Vec::with_capacity(fixed.len());
    if units.len() > ORDERED_UNITS {
        order = fixed.to_vec();
        order.sort_by(|a, b| {
            alone[b].total_cmp(&alone[a]).then_with(|| points(*b).total_cmp(&points(*a))).then(a.cmp(b))
        });
    } else {
        let mut current = score;
        while !units.is_empty() {
            let mut best: Option<(usize, f64, f64)> = None;
            for (u, unit) in units.iter().enumerate() {
                let mut with = order.clone();
                with.extend(unit);
                let after = score_without(input, &with).unwrap_or(current);
                let per_fix = (after - current) / unit.len() as f64;
                let better = best.is_none_or(|(b, bp, _)| {
                    per_fix > bp + 1e-9 || ((per_fix - bp).abs() <= 1e-9 && unit.len() < units[b].len())
                });
                if better {
                    best = Some((u, per_fix, after));
                }
            }
            let Some((u, _, after)) = best else { break };
            order.extend(units.remove(u));
            current = after;
        }
    }
    let mut done = Vec::with_capacity(order.len());
    order
        .into_iter()
        .map(|i| {
            done.push(i);
            let after = score_without(input, &done).unwrap_or(score);
            Step {
                finding: i,
                gain: (alone[&i] * 10.0).round() / 10.0,
                score_after: after,
                grade_after: grade_of(after),
                lifts_cap: forced.get(&i).copied(),
            }
        })
        .collect()
}

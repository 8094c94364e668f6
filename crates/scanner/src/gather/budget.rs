//! The budget of one domain's scan ([`Limits`]): its deadlines, what it spent and what
//! it left out, said in words at the end ([`Budget::notes`]).

use super::Stage;
use crate::probes::Limits;
use crate::probes::web;

/// What cut a stage short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// The stage's own time ([`crate::probes::StageTimes`]).
    Budget(std::time::Duration),
    /// The scan's overall deadline ([`Limits::time`]).
    Deadline,
}

/// The running account of a domain scan: the deadlines, what is spent and what was left
/// out; [`Budget::notes`] says it in words at the end.
pub(crate) struct Budget {
    pub(crate) limits: Limits,
    deadline: tokio::time::Instant,
    pub(crate) names: usize,
    pub(crate) visits: usize,
    pub(crate) names_dropped: usize,
    pub(crate) hosts_dropped: usize,
    pub(crate) endpoints_dropped: usize,
    pub(crate) visits_dropped: usize,
    /// The stages cut short, and by what.
    late: Vec<(&'static str, Cut)>,
    pub(crate) stages: Vec<Stage>,
    /// When the current stage started, and the end of its time.
    started: tokio::time::Instant,
    pub(crate) until: tokio::time::Instant,
    /// Assets removed from the company's footprint: never admitted as hosts.
    pub(crate) excluded: Vec<model::FootprintAsset>,
}

impl Budget {
    pub(crate) fn new(limits: &Limits) -> Budget {
        let now = tokio::time::Instant::now();
        Budget {
            limits: limits.clone(),
            deadline: now + limits.time,
            names: 0,
            visits: 0,
            names_dropped: 0,
            hosts_dropped: 0,
            endpoints_dropped: 0,
            visits_dropped: 0,
            late: Vec::new(),
            stages: Vec::new(),
            started: now,
            until: now + limits.time,
            excluded: Vec::new(),
        }
    }

    /// Starts a stage that may take `time` (less if the scan's deadline comes first);
    /// returns the end of its time.
    pub(crate) fn begin(&mut self, time: std::time::Duration) -> tokio::time::Instant {
        let now = tokio::time::Instant::now();
        self.started = now;
        self.until = (now + time).min(self.deadline);
        self.until
    }

    pub(crate) fn names_left(&self) -> usize {
        self.limits.names.saturating_sub(self.names)
    }

    /// Keeps the new assets the host cap has room for.
    pub(crate) fn admit(
        &mut self,
        assets: &mut Vec<crate::discovery::Asset>,
        resolved: crate::discovery::Resolved,
    ) -> Vec<crate::discovery::Skipped> {
        self.names += resolved.looked_up + resolved.over_budget;
        self.names_dropped += resolved.over_budget;
        let mut skipped = resolved.skipped;
        let mut new = resolved.assets;
        if !self.excluded.is_empty() {
            let (out, kept): (Vec<_>, Vec<_>) = new.into_iter().partition(|a| self.is_excluded(a));
            new = kept;
            skipped.extend(out.into_iter().map(|a| crate::discovery::Skipped {
                reason: "removed from the company's footprint (an accepted dispute): not scanned".to_owned(),
                name: a.name,
                source: a.source,
                evidence: a.evidence,
            }));
        }
        let room = self.limits.hosts.saturating_sub(assets.len());
        if new.len() > room {
            self.hosts_dropped += new.len() - room;
            new.truncate(room);
        }
        assets.extend(new);
        skipped
    }

    /// Is the host removed from the footprint: its name, or every one of its addresses?
    pub(crate) fn is_excluded(&self, a: &crate::discovery::Asset) -> bool {
        self.excluded.iter().any(|x| {
            x.covers(&a.name) || (!a.addresses.is_empty() && a.addresses.iter().all(|ip| x.covers_address(*ip)))
        })
    }

    /// Keeps the endpoints the endpoint cap has room for.
    pub(crate) fn admit_endpoint(&mut self, endpoints: &mut Vec<web::Endpoint>, e: web::Endpoint) {
        if endpoints.len() < self.limits.endpoints {
            endpoints.push(e);
        } else {
            self.endpoints_dropped += 1;
        }
    }

    /// Is the current stage's time (or the scan's) spent?
    pub(crate) fn expired(&self) -> bool {
        tokio::time::Instant::now() >= self.until
    }

    /// Notes that `stage` did not finish in its time: its own, or the scan's deadline.
    pub(crate) fn out_of_time(&mut self, stage: &'static str) {
        if self.late.iter().any(|(s, _)| *s == stage) {
            return;
        }
        let cut = if self.until >= self.deadline || tokio::time::Instant::now() >= self.deadline {
            Cut::Deadline
        } else {
            Cut::Budget(self.until.saturating_duration_since(self.started))
        };
        self.late.push((stage, cut));
    }

    pub(crate) fn stage(&mut self, name: &'static str, summary: String) {
        let now = tokio::time::Instant::now();
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let millis = ms(now.duration_since(self.started));
        let budget_millis = ms(self.until.saturating_duration_since(self.started));
        self.stages.push(Stage { name, millis, budget_millis, summary });
        self.started = now;
    }

    /// One line per cap reached and for each stage cut short, e.g. "truncated: 500
    /// hosts, the cap (1549 more found)".
    pub(crate) fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.names_dropped > 0 {
            out.push(format!(
                "truncated: {} candidate names, the cap ({} more not resolved)",
                self.limits.names, self.names_dropped
            ));
        }
        if self.hosts_dropped > 0 {
            out.push(format!("truncated: {} hosts, the cap ({} more found)", self.limits.hosts, self.hosts_dropped));
        }
        if self.endpoints_dropped > 0 {
            out.push(format!(
                "truncated: {} endpoints, the cap ({} more found)",
                self.limits.endpoints, self.endpoints_dropped
            ));
        }
        if self.visits_dropped > 0 {
            out.push(format!(
                "truncated: {} host visits, the cap ({} more hosts not visited)",
                self.limits.visits, self.visits_dropped
            ));
        }
        let overall: Vec<&str> = self.late.iter().filter(|(_, c)| *c == Cut::Deadline).map(|(s, _)| *s).collect();
        for (stage, cut) in &self.late {
            if let Cut::Budget(time) = cut {
                out.push(format!("truncated: {stage} ran out of its {}-second budget", time.as_secs()));
            }
        }
        if !overall.is_empty() {
            out.push(format!(
                "truncated: the {}-second deadline passed during {}",
                self.limits.time.as_secs(),
                overall.join(", ")
            ));
        }
        for n in &out {
            tracing::warn!(note = %n, "scan budget");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn endpoints_beyond_the_cap_are_noted() {
        let limits = Limits { endpoints: 2, ..Limits::default() };
        let mut budget = Budget::new(&limits);
        let mut kept = Vec::new();
        for port in [80, 443, 8080, 8443] {
            let e = web::Endpoint {
                host: "a.test".into(),
                ip: std::net::Ipv4Addr::LOCALHOST.into(),
                port,
                service: "http".into(),
                product: None,
                version: None,
                banner: String::new(),
            };
            budget.admit_endpoint(&mut kept, e);
        }
        assert_eq!(kept.iter().map(|e| e.port).collect::<Vec<_>>(), [80, 443]);
        assert_eq!(budget.notes(), ["truncated: 2 endpoints, the cap (2 more found)"]);
    }

    #[tokio::test]
    async fn a_stage_cut_by_the_deadline_is_told_from_one_cut_by_its_own_time() {
        let limits = Limits { time: std::time::Duration::from_secs(100), ..Limits::default() };
        let mut budget = Budget::new(&limits);
        budget.begin(std::time::Duration::from_secs(30));
        budget.out_of_time("the port scan");
        budget.begin(std::time::Duration::from_secs(300));
        budget.out_of_time("the TLS probes");
        assert_eq!(
            budget.notes(),
            [
                "truncated: the port scan ran out of its 30-second budget",
                "truncated: the 100-second deadline passed during the TLS probes"
            ]
        );
    }
}

//! Charts as inline SVG: a line over time (score history), bars by month (incident and
//! breach probability) and a loss exceedance curve on a log scale. Every chart is an
//! `img` with a label, and each point carries a `<title>` (its value, for a pointer or
//! a screen reader); the views print the same figures in a table beside it.
//!
//! Values come from API answers: anything not finite is left out, and a chart with
//! nothing to draw says so.

use maud::{Markup, html};

const W: f64 = 640.0;
const H: f64 = 240.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 32.0;

/// A linear map from data to the plot area.
#[derive(Clone, Copy)]
struct Scale {
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
}

impl Scale {
    fn new(lo: f64, hi: f64, from: f64, to: f64) -> Self {
        // A single value still gets a range, centred.
        let (lo, hi) = if hi > lo { (lo, hi) } else { (lo - 1.0, hi + 1.0) };
        Self { lo, hi, from, to }
    }
    fn at(&self, v: f64) -> f64 {
        // A range too wide or too narrow for f64 puts everything in the middle.
        let span = self.hi - self.lo;
        let t = if span.is_finite() && span > 0.0 { (v - self.lo) / span } else { 0.5 };
        let t = if t.is_nan() { 0.5 } else { t.clamp(0.0, 1.0) };
        self.from + t * (self.to - self.from)
    }
}

fn px(v: f64) -> String {
    format!("{v:.1}")
}

fn empty(label: &str) -> Markup {
    html! { p.chart-empty { (label) ": nothing to draw yet." } }
}

/// A line through `points` (x, y), x ascending, y within `y_range`; `x_text` and
/// `y_text` label the axes' ticks and the points.
pub fn line(
    label: &str,
    points: &[(f64, f64)],
    y_range: (f64, f64),
    x_text: impl Fn(f64) -> String,
    y_text: impl Fn(f64) -> String,
) -> Markup {
    lines(label, &[("", points.to_vec())], y_range, x_text, y_text)
}

/// Most lines one chart tells apart (each has its own colour, `s0` to `s12`).
pub const MAX_LINES: usize = 13;

/// One line per named series (name, points), on shared axes, with a legend when there
/// is more than one; the first [`MAX_LINES`] are drawn.
pub fn lines(
    label: &str,
    series: &[(&str, Vec<(f64, f64)>)],
    y_range: (f64, f64),
    x_text: impl Fn(f64) -> String,
    y_text: impl Fn(f64) -> String,
) -> Markup {
    let series: Vec<(&str, Vec<(f64, f64)>)> = series
        .iter()
        .take(MAX_LINES)
        .map(|(name, points)| (*name, points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect()))
        .filter(|(_, points): &(&str, Vec<(f64, f64)>)| !points.is_empty())
        .collect();
    if series.is_empty() {
        return empty(label);
    }
    let all = series.iter().flat_map(|(_, p)| p.iter());
    let (x0, x1) = all.fold((f64::MAX, f64::MIN), |(a, b), (x, _)| (a.min(*x), b.max(*x)));
    let xs = Scale::new(x0, x1, LEFT, W - RIGHT);
    let ys = Scale::new(y_range.0, y_range.1, H - BOTTOM, TOP);
    let ticks = y_ticks(y_range);
    let x_ticks: Vec<f64> = if x1 > x0 { vec![x0, (x0 + x1) / 2.0, x1] } else { vec![x0] };
    let named = series.len() > 1;
    html! {
        svg.chart viewBox={"0 0 " (W) " " (H)} role="img" aria-label=(label) {
            title { (label) }
            (grid(&ticks, &ys, &y_text))
            @for x in &x_ticks {
                text.tick x=(px(xs.at(*x))) y=(px(H - 10.0)) text-anchor="middle" { (x_text(*x)) }
            }
            @for (i, (name, points)) in series.iter().enumerate() {
                @let path: Vec<String> = points.iter().map(|(x, y)| format!("{},{}", px(xs.at(*x)), px(ys.at(*y)))).collect();
                g class={"s" (i)} {
                    polyline.series points=(path.join(" ")) fill="none" {}
                    @for (x, y) in points {
                        circle.point cx=(px(xs.at(*x))) cy=(px(ys.at(*y))) r=(if named { "2.5" } else { "3.5" }) {
                            title { @if named { (name) ", " } (x_text(*x)) ": " (y_text(*y)) }
                        }
                    }
                }
            }
        }
        @if named {
            ul.legend {
                @for (i, (name, _)) in series.iter().enumerate() {
                    li class={"s" (i)} { span.swatch {} (name) }
                }
            }
        }
    }
}

/// Bars of `values` (label, value) from 0 up to `y_max`.
pub fn bars(label: &str, values: &[(String, f64)], y_max: f64, y_text: impl Fn(f64) -> String) -> Markup {
    let values: Vec<&(String, f64)> = values.iter().filter(|(_, v)| v.is_finite()).collect();
    if values.is_empty() || !y_max.is_finite() || y_max <= 0.0 {
        return empty(label);
    }
    let ys = Scale::new(0.0, y_max, H - BOTTOM, TOP);
    let slot = (W - LEFT - RIGHT) / values.len() as f64;
    let width = (slot * 0.7).max(1.0);
    // At most 12 labels under the bars, evenly spread.
    let every = values.len().div_ceil(12).max(1);
    let ticks = y_ticks((0.0, y_max));
    html! {
        svg.chart viewBox={"0 0 " (W) " " (H)} role="img" aria-label=(label) {
            title { (label) }
            (grid(&ticks, &ys, &y_text))
            @for (i, (name, v)) in values.iter().enumerate() {
                @let x = LEFT + slot * i as f64 + (slot - width) / 2.0;
                @let top = ys.at(*v);
                rect.bar x=(px(x)) y=(px(top)) width=(px(width)) height=(px((H - BOTTOM - top).max(0.0))) {
                    title { (name) ": " (y_text(*v)) }
                }
                @if i % every == 0 {
                    text.tick x=(px(x + width / 2.0)) y=(px(H - 10.0)) text-anchor="middle" { (name) }
                }
            }
        }
    }
}

/// A loss exceedance curve: the probability (0–1) that losses exceed each threshold
/// (US dollars, log scale), with vertical markers (label, dollars) such as VaR and TVaR.
pub fn exceedance(label: &str, points: &[(f64, f64)], markers: &[(&str, f64)]) -> Markup {
    let points: Vec<(f64, f64)> =
        points.iter().copied().filter(|(x, p)| x.is_finite() && *x > 0.0 && p.is_finite()).collect();
    if points.is_empty() {
        return empty(label);
    }
    let (x0, x1) = points.iter().fold((f64::MAX, f64::MIN), |(a, b), (x, _)| (a.min(*x), b.max(*x)));
    let xs = Scale::new(x0.log10(), x1.log10(), LEFT, W - RIGHT);
    let p_max = points.iter().map(|(_, p)| *p).fold(0.0_f64, f64::max).max(0.01);
    let ys = Scale::new(0.0, p_max, H - BOTTOM, TOP);
    let path: Vec<String> = points.iter().map(|(x, p)| format!("{},{}", px(xs.at(x.log10())), px(ys.at(*p)))).collect();
    let decades: Vec<f64> = {
        let (a, b) = (x0.log10().ceil() as i32, x1.log10().floor() as i32);
        // At most about eight labelled decades.
        let step = usize::try_from((b - a) / 8 + 1).unwrap_or(1).max(1);
        (a..=b).step_by(step).map(|d| 10f64.powi(d)).collect()
    };
    let ticks = y_ticks((0.0, p_max));
    html! {
        svg.chart viewBox={"0 0 " (W) " " (H)} role="img" aria-label=(label) {
            title { (label) }
            (grid(&ticks, &ys, &|p| percent(p)))
            @for d in &decades {
                text.tick x=(px(xs.at(d.log10()))) y=(px(H - 10.0)) text-anchor="middle" { (usd(*d)) }
            }
            polyline.series points=(path.join(" ")) fill="none" {}
            @for (x, p) in &points {
                circle.point cx=(px(xs.at(x.log10()))) cy=(px(ys.at(*p))) r="2.5" {
                    title { "losses over " (usd(*x)) ": " (percent(*p)) }
                }
            }
            @for (i, (name, at)) in markers.iter().filter(|(_, v)| v.is_finite() && *v > 0.0).enumerate() {
                @let x = xs.at(at.log10());
                line.marker x1=(px(x)) x2=(px(x)) y1=(px(TOP)) y2=(px(H - BOTTOM)) {
                    title { (name) " " (usd(*at)) }
                }
                // Labels one under the other: markers may stand close together.
                text.marker-label x=(px(x + 3.0)) y=(px(TOP + 10.0 + 13.0 * i as f64)) { (name) " " (usd(*at)) }
            }
        }
    }
}

fn grid(ticks: &[f64], ys: &Scale, y_text: &dyn Fn(f64) -> String) -> Markup {
    html! {
        @for t in ticks {
            line.grid x1=(px(LEFT)) x2=(px(W - RIGHT)) y1=(px(ys.at(*t))) y2=(px(ys.at(*t))) {}
            text.tick x=(px(LEFT - 6.0)) y=(px(ys.at(*t) + 4.0)) text-anchor="end" { (y_text(*t)) }
        }
    }
}

/// Five evenly spaced ticks over the range.
fn y_ticks((lo, hi): (f64, f64)) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![lo];
    }
    (0..=4).map(|i| lo + (hi - lo) * f64::from(i) / 4.0).collect()
}

/// Dollars, shortened: $950, $12k, $1.3M, $2.1B.
pub fn usd(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "—".to_owned()
    } else if a >= 1e9 {
        format!("${:.1}B", v / 1e9)
    } else if a >= 1e6 {
        format!("${:.1}M", v / 1e6)
    } else if a >= 1e3 {
        format!("${:.0}k", v / 1e3)
    } else {
        format!("${v:.0}")
    }
}

/// A probability as a percentage with one decimal (two below 1 %).
pub fn percent(p: f64) -> String {
    if !p.is_finite() {
        "—".to_owned()
    } else if p * 100.0 < 1.0 && p > 0.0 {
        format!("{:.2} %", p * 100.0)
    } else {
        format!("{:.1} %", p * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every coordinate the chart draws, as numbers.
    fn coordinates(svg: &str) -> Vec<f64> {
        let mut out = Vec::new();
        for attr in
            [" x=\"", " y=\"", " cx=\"", " cy=\"", " x1=\"", " x2=\"", " y1=\"", " y2=\"", " width=\"", " height=\""]
        {
            for part in svg.split(attr).skip(1) {
                let v = part.split('"').next().unwrap_or_default();
                out.push(v.parse::<f64>().unwrap_or(f64::NAN));
            }
        }
        for part in svg.split("points=\"").skip(1) {
            for pair in part.split('"').next().unwrap_or_default().split(' ') {
                for v in pair.split(',') {
                    out.push(v.parse::<f64>().unwrap_or(f64::NAN));
                }
            }
        }
        out
    }

    #[test]
    fn a_line_maps_its_points_into_the_plot() {
        let svg = line("history", &[(0.0, 50.0), (10.0, 100.0)], (0.0, 100.0), |x| format!("{x}"), |y| format!("{y}"))
            .into_string();
        assert!(svg.contains(r#"aria-label="history""#));
        // The first point is at the left edge, half way up; the second at the top right.
        assert!(svg.contains(r#"points="56.0,110.0 624.0,12.0""#), "{svg}");
    }

    #[test]
    fn lines_share_their_axes_and_name_themselves_in_a_legend() {
        let a = vec![(0.0, 0.0), (10.0, 100.0)];
        let b = vec![(5.0, 50.0)];
        let svg = lines(
            "trend",
            &[("Global", a), ("SPF", b), ("empty", vec![])],
            (0.0, 100.0),
            |x| format!("{x}"),
            |y| format!("{y}"),
        )
        .into_string();
        // Both on the x axis from 0 to 10: b's point is in the middle.
        assert!(svg.contains(r#"points="56.0,208.0 624.0,12.0""#), "{svg}");
        assert!(svg.contains(r#"points="340.0,110.0""#), "{svg}");
        assert!(svg.contains(r#"<li class="s0"><span class="swatch"></span>Global</li>"#), "{svg}");
        assert!(
            svg.contains(r#"<li class="s1">"#) && !svg.contains("empty"),
            "a line without points is left out: {svg}"
        );
        // One line: no legend.
        assert!(
            !line("h", &[(0.0, 1.0)], (0.0, 100.0), |x| x.to_string(), |y| y.to_string())
                .into_string()
                .contains("legend")
        );
    }

    #[test]
    fn nothing_to_draw_is_said() {
        assert!(line("h", &[], (0.0, 100.0), |x| x.to_string(), |y| y.to_string()).into_string().contains("nothing"));
        assert!(bars("b", &[], 1.0, |y| y.to_string()).into_string().contains("nothing"));
        assert!(exceedance("e", &[(0.0, 0.5), (f64::NAN, 0.1)], &[]).into_string().contains("nothing"));
    }

    #[test]
    fn figures_read_as_people_write_them() {
        assert_eq!(usd(950.0), "$950");
        assert_eq!(usd(12_400.0), "$12k");
        assert_eq!(usd(1_260_000.0), "$1.3M");
        assert_eq!(percent(0.123), "12.3 %");
        assert_eq!(percent(0.0042), "0.42 %");
        assert_eq!(percent(f64::NAN), "—");
    }

    #[test]
    fn text_in_labels_is_escaped() {
        let svg = bars("<script>", &[("<b>".to_owned(), 1.0)], 2.0, |y| y.to_string()).into_string();
        assert!(!svg.contains("<script>") && !svg.contains("<b>"), "{svg}");
    }

    proptest! {
        /// Whatever numbers an answer holds, every chart stays inside its box and
        /// draws no NaN or infinity.
        #[test]
        fn charts_stay_in_their_box(
            points in proptest::collection::vec((any::<f64>(), any::<f64>()), 0..40),
            markers in proptest::collection::vec(any::<f64>(), 0..4),
            y_max in any::<f64>(),
        ) {
            let named: Vec<(String, f64)> = points.iter().map(|(x, y)| (format!("{x}"), *y)).collect();
            let marks: Vec<(&str, f64)> = markers.iter().map(|m| ("m", *m)).collect();
            for svg in [
                line("l", &points, (0.0, 100.0), |x| format!("{x:.0}"), |y| format!("{y:.0}")).into_string(),
                lines("ls", &[("a", points.clone()), ("b", points.iter().rev().copied().collect())], (0.0, 100.0), |x| format!("{x:.0}"), |y| format!("{y:.0}")).into_string(),
                bars("b", &named, y_max, |y| format!("{y:.2}")).into_string(),
                exceedance("e", &points, &marks).into_string(),
            ] {
                for v in coordinates(&svg) {
                    prop_assert!(v.is_finite() && (-1.0..=W + 1.0).contains(&v), "{v} in {svg}");
                }
            }
        }
    }
}

//! SVG line charts (plotters): throughput and latency against concurrency, and per-interval
//! timelines.

use std::path::Path;

use plotters::prelude::*;

/// One line of a chart.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    /// Legend label.
    pub(crate) label: String,
    /// Points (x, y), in x order, joined by the line.
    pub(crate) points: Vec<(f64, f64)>,
    /// Single measurements (x, y) drawn as hollow dots in the line's colour, not joined
    /// (e.g. every pass beside the line through their medians).
    pub(crate) passes: Vec<(f64, f64)>,
}

/// How to draw a chart.
#[derive(Debug, Clone)]
pub(crate) struct Chart<'a> {
    /// Title on top.
    pub(crate) title: &'a str,
    /// X axis label.
    pub(crate) x_label: &'a str,
    /// Y axis label.
    pub(crate) y_label: &'a str,
    /// Logarithmic x axis (concurrency 8..1024).
    pub(crate) log_x: bool,
    /// Logarithmic y axis (latency).
    pub(crate) log_y: bool,
}

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

fn bounds(series: &[Series], log: bool, pick: impl Fn(&(f64, f64)) -> f64) -> (f64, f64) {
    let vals: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().chain(&s.passes).map(&pick))
        .filter(|v| v.is_finite())
        .collect();
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() {
        return (1.0, 10.0);
    }
    if log {
        let lo = lo.max(1e-3);
        (lo / 1.5, (hi * 1.5).max(lo * 2.0))
    } else {
        let hi = if hi <= lo { lo + 1.0 } else { hi };
        (lo.min(0.0), hi * 1.1)
    }
}

/// A tick label: integers without decimals, small values with up to two.
fn short(v: f64) -> String {
    if v.abs() >= 10.0 || v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Draws `series` into an SVG file at `path`.
pub(crate) fn line_chart(path: &Path, chart: &Chart<'_>, series: &[Series]) -> Result<(), String> {
    let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| format!("plotting {}: {e}", path.display());
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (x0, x1) = bounds(series, chart.log_x, |p| p.0);
    let (y0, y1) = bounds(series, chart.log_y, |p| p.1);
    let mut b = ChartBuilder::on(&root);
    b.caption(chart.title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70);
    macro_rules! draw {
        ($ctx:expr) => {{
            let mut ctx = $ctx;
            ctx.configure_mesh()
                .x_desc(chart.x_label)
                .y_desc(chart.y_label)
                .x_labels(8)
                .y_labels(8)
                .x_label_formatter(&|v| short(*v))
                .y_label_formatter(&|v| short(*v))
                .light_line_style(WHITE)
                .draw()
                .map_err(|e| err(&e))?;
            for (i, s) in series.iter().enumerate() {
                let color = COLORS[i % COLORS.len()];
                let pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|p| !chart.log_y || p.1 > 0.0)
                    .collect();
                ctx.draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                    .map_err(|e| err(&e))?
                    .label(s.label.clone())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                    });
                ctx.draw_series(PointSeries::of_element(
                    pts,
                    3,
                    color.filled(),
                    &|c, s, st| EmptyElement::at(c) + Circle::new((0, 0), s, st),
                ))
                .map_err(|e| err(&e))?;
                let passes: Vec<(f64, f64)> = s
                    .passes
                    .iter()
                    .copied()
                    .filter(|p| p.1.is_finite() && (!chart.log_y || p.1 > 0.0))
                    .collect();
                ctx.draw_series(PointSeries::of_element(
                    passes,
                    4,
                    color.stroke_width(1),
                    &|c, s, st| EmptyElement::at(c) + Circle::new((0, 0), s, st),
                ))
                .map_err(|e| err(&e))?;
            }
            ctx.configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperLeft)
                .draw()
                .map_err(|e| err(&e))?;
        }};
    }
    match (chart.log_x, chart.log_y) {
        (true, true) => draw!(b
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
            .map_err(|e| err(&e))?),
        (true, false) => draw!(b
            .build_cartesian_2d((x0..x1).log_scale(), y0..y1)
            .map_err(|e| err(&e))?),
        (false, true) => draw!(b
            .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
            .map_err(|e| err(&e))?),
        (false, false) => draw!(b.build_cartesian_2d(x0..x1, y0..y1).map_err(|e| err(&e))?),
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_an_svg() {
        let dir = std::env::temp_dir().join(format!("tpbed-load-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.svg");
        let s = vec![
            Series {
                label: "a".into(),
                points: vec![(8.0, 100.0), (64.0, 300.0), (1024.0, 200.0)],
                passes: vec![(8.0, 90.0), (8.0, 110.0)],
            },
            Series {
                label: "b".into(),
                points: vec![(8.0, 1.0), (64.0, 30.0), (1024.0, 900.0)],
                passes: Vec::new(),
            },
        ];
        let c = Chart {
            title: "QPS",
            x_label: "connections",
            y_label: "QPS",
            log_x: true,
            log_y: true,
        };
        line_chart(&p, &c, &s).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("polyline"),
            "{}",
            &svg[..200.min(svg.len())]
        );
        // six medians and two single passes, each a dot; the x axis is named
        assert_eq!(svg.matches("<circle").count(), 8, "{svg}");
        assert!(svg.contains("\nconnections\n</text>"), "{svg}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

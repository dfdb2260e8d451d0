//! Charts as SVG text, drawn by plotters' SVG backend: a [`Plot`] of lines, min–max bands,
//! dots and vertical marks on numeric axes; a [`heat_map`] of counts; [`bars`] over
//! named items. Every axis carries its description with its unit; the ranges are the
//! data's (finite values only), padded by 5 %.

use std::ops::Range;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{SegmentValue, SegmentedCoord};
use plotters::coord::types::RangedCoordusize;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The chart's size in pixels.
pub const SIZE: (u32, u32) = (880, 340);
/// The series' colours, in order: blue, orange, green, red, purple, grey.
pub const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(127, 127, 127),
];

/// A chart's axes: what the x and y values are, with their units.
pub struct Axes {
    pub x: String,
    pub y: String,
}

/// A line through `points`, named in the legend; a thin one for a reference (a baseline,
/// chance) rather than a result.
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub colour: RGBColor,
    pub thin: bool,
}

/// The area between `lower` and `upper` (the same x values), named in the legend.
pub struct Band {
    pub name: String,
    pub lower: Vec<(f64, f64)>,
    pub upper: Vec<(f64, f64)>,
    pub colour: RGBColor,
}

/// Dots at `points`, named in the legend.
pub struct Dots {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub colour: RGBColor,
}

/// A chart on numeric axes: bands under lines under dots, and vertical marks.
pub struct Plot {
    pub axes: Axes,
    pub bands: Vec<Band>,
    pub lines: Vec<Line>,
    pub dots: Vec<Dots>,
    /// Vertical lines at these x values, named in the legend.
    pub marks: Option<(String, Vec<f64>)>,
    /// The y range when it is fixed (rates: 0 to 100 %), else the data's.
    pub y_range: Option<Range<f64>>,
}

impl Plot {
    /// A chart of nothing yet on `axes`.
    pub fn new(x: &str, y: &str) -> Self {
        let axes = Axes { x: x.into(), y: y.into() };
        Plot { axes, bands: Vec::new(), lines: Vec::new(), dots: Vec::new(), marks: None, y_range: None }
    }

    /// Adds a line.
    pub fn line(mut self, name: &str, points: Vec<(f64, f64)>, colour: usize, thin: bool) -> Self {
        let colour = pick(colour);
        self.lines.push(Line { name: name.into(), points, colour, thin });
        self
    }

    /// The SVG.
    ///
    /// # Errors
    /// Only if plotters fails to draw, which it does not on a string.
    pub fn svg(&self) -> Result<String> {
        let x_values =
            self.all_points().map(|(x, _)| x).chain(self.marks.iter().flat_map(|(_, xs)| xs.iter().copied()));
        let x_range = padded(x_values);
        let y_range = self.y_range.clone().unwrap_or_else(|| padded(self.all_points().map(|(_, y)| y)));
        svg_of(SIZE, |root| {
            let mut chart = ChartBuilder::on(root)
                .margin(12)
                .x_label_area_size(44)
                .y_label_area_size(72)
                .build_cartesian_2d(x_range, y_range.clone())
                .map_err(drawing)?;
            chart
                .configure_mesh()
                .x_desc(self.axes.x.as_str())
                .y_desc(self.axes.y.as_str())
                .x_label_formatter(&|v| number(*v))
                .y_label_formatter(&|v| number(*v))
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(drawing)?;
            for band in &self.bands {
                let outline: Vec<(f64, f64)> = band.lower.iter().chain(band.upper.iter().rev()).copied().collect();
                let colour = band.colour;
                chart
                    .draw_series(std::iter::once(Polygon::new(outline, colour.mix(0.2).filled())))
                    .map_err(drawing)?
                    .label(band.name.as_str())
                    .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], colour.mix(0.2).filled()));
            }
            if let Some((name, xs)) = &self.marks {
                let red = pick(3);
                let verticals = xs.iter().map(|&x| PathElement::new(vec![(x, y_range.start), (x, y_range.end)], red));
                chart
                    .draw_series(verticals)
                    .map_err(drawing)?
                    .label(name.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x + 10, y - 6), (x + 10, y + 6)], red));
            }
            for line in &self.lines {
                let points = line.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite());
                // One polyline a series (plotters' dashed lines are a polyline a dash).
                let style = line.colour.stroke_width(if line.thin { 1 } else { 2 });
                chart
                    .draw_series(LineSeries::new(points, style))
                    .map_err(drawing)?
                    .label(line.name.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            }
            for dots in &self.dots {
                let colour = dots.colour;
                let circles = dots.points.iter().map(|&(x, y)| Circle::new((x, y), 3, colour.filled()));
                chart
                    .draw_series(circles)
                    .map_err(drawing)?
                    .label(dots.name.as_str())
                    .legend(move |(x, y)| Circle::new((x + 10, y), 3, colour.filled()));
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.3))
                .draw()
                .map_err(drawing)?;
            Ok(())
        })
    }

    fn all_points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        let bands = self.bands.iter().flat_map(|band| band.lower.iter().chain(&band.upper));
        let lines = self.lines.iter().flat_map(|line| &line.points);
        let dots = self.dots.iter().flat_map(|dots| &dots.points);
        bands.chain(lines).chain(dots).copied()
    }
}

/// Colour `i` of [`COLOURS`], cycling.
pub fn pick(i: usize) -> RGBColor {
    COLOURS.get(i % COLOURS.len()).copied().unwrap_or(BLACK)
}

/// A heat map of `counts` (row-major `rows.len() × columns.len()`), each cell showing its
/// count, shaded by its share of its row.
///
/// # Errors
/// Only if plotters fails to draw.
pub fn heat_map(axes: &Axes, rows: &[String], columns: &[String], counts: &[u64]) -> Result<String> {
    let (n_rows, n_columns) = (rows.len().max(1), columns.len().max(1));
    let side = u32::try_from(80 + 34 * n_rows.max(n_columns)).unwrap_or(u32::MAX).clamp(240, 880);
    svg_of((side + 120, side), |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(60)
            .y_label_area_size(110)
            .build_cartesian_2d(segments(n_columns), segments(n_rows))
            .map_err(drawing)?;
        // Row 0 at the top.
        let row_name = |value: &SegmentValue<usize>| segment_name(rows, value, true);
        let column_name = |value: &SegmentValue<usize>| segment_name(columns, value, false);
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(axes.x.as_str())
            .y_desc(axes.y.as_str())
            .x_labels(n_columns)
            .y_labels(n_rows)
            .x_label_formatter(&column_name)
            .y_label_formatter(&row_name)
            .draw()
            .map_err(drawing)?;
        let blue = pick(0);
        for (r, row) in counts.chunks(n_columns).enumerate().take(n_rows) {
            let total = row.iter().sum::<u64>().max(1) as f64;
            // Row 0 at the top.
            let y = n_rows - 1 - r;
            for (c, &count) in row.iter().enumerate() {
                let share = count as f64 / total;
                let cell = [
                    (SegmentValue::Exact(c), SegmentValue::Exact(y + 1)),
                    (SegmentValue::Exact(c + 1), SegmentValue::Exact(y)),
                ];
                chart
                    .draw_series(std::iter::once(Rectangle::new(cell, blue.mix(0.08 + 0.9 * share).filled())))
                    .map_err(drawing)?;
                let ink = if share > 0.5 { WHITE } else { BLACK };
                let label = Text::new(
                    count.to_string(),
                    (SegmentValue::CenterOf(c), SegmentValue::CenterOf(y)),
                    ("sans-serif", 14).into_font().color(&ink).pos(Pos::new(HPos::Center, VPos::Center)),
                );
                chart.draw_series(std::iter::once(label)).map_err(drawing)?;
            }
        }
        Ok(())
    })
}

/// Bars of `values` over the `names`, the bar `chosen` (if any) in a second colour.
///
/// # Errors
/// Only if plotters fails to draw.
pub fn bars(axes: &Axes, names: &[String], values: &[f64], chosen: Option<usize>) -> Result<String> {
    let n = names.len().max(1);
    let top = values.iter().copied().filter(|v| v.is_finite()).fold(0.0f64, f64::max).max(f64::MIN_POSITIVE) * 1.1;
    svg_of(SIZE, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(60)
            .y_label_area_size(72)
            .build_cartesian_2d(segments(n), 0.0..top)
            .map_err(drawing)?;
        let name = |value: &SegmentValue<usize>| segment_name(names, value, false);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(axes.x.as_str())
            .y_desc(axes.y.as_str())
            .x_labels(n.min(24))
            .x_label_formatter(&name)
            .y_label_formatter(&|v| number(*v))
            .draw()
            .map_err(drawing)?;
        let rectangles = values.iter().enumerate().map(|(i, &v)| {
            let colour = if Some(i) == chosen { pick(1) } else { pick(0) };
            let mut bar = Rectangle::new(
                [(SegmentValue::Exact(i), 0.0), (SegmentValue::Exact(i + 1), v.max(0.0))],
                colour.filled(),
            );
            bar.set_margin(0, 0, 3, 3);
            bar
        });
        chart.draw_series(rectangles).map_err(drawing)?;
        Ok(())
    })
}

/// The SVG of a white canvas of `size` pixels that `draw` draws on.
fn svg_of(size: (u32, u32), draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<()>) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        draw(&root)?;
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// The name of the item whose segment's centre `value` is (counted from the end when
/// `reversed`), empty elsewhere.
fn segment_name(names: &[String], value: &SegmentValue<usize>, reversed: bool) -> String {
    let SegmentValue::CenterOf(i) = *value else { return String::new() };
    let i = if reversed { names.len().saturating_sub(1 + i) } else { i };
    names.get(i).cloned().unwrap_or_default()
}

/// `n` segments (at least 1) for `n` items: plotters' integer ranges hold their end.
fn segments(n: usize) -> SegmentedCoord<RangedCoordusize> {
    (0..n.saturating_sub(1)).into_segmented()
}

/// `values`' finite range, padded by 5 % (a unit around a single value; 0..1 for none).
fn padded(values: impl Iterator<Item = f64>) -> Range<f64> {
    let (lo, hi) =
        values.filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return 0.0..1.0;
    }
    let pad = if hi > lo { 0.05 * (hi - lo) } else { 0.5 * lo.abs().max(1.0) };
    (lo - pad)..(hi + pad)
}

/// A tick label: short, in scientific notation beyond 10⁵ or below 10⁻³.
pub fn number(v: f64) -> String {
    let size = v.abs();
    if size != 0.0 && !(1e-3..1e5).contains(&size) {
        return format!("{v:.1e}");
    }
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// plotters' error, as the command's.
fn drawing(error: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("drawing the report's chart: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plot_is_svg_with_its_axes_and_series() {
        let mut plot =
            Plot::new("row", "error rate (%)").line("rolling", vec![(1.0, 2.0), (2.0, 3.0), (3.0, 1.0)], 0, false);
        plot.marks = Some(("drift".into(), vec![2.0]));
        let svg = plot.svg().unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        for text in ["row", "error rate (%)", "rolling", "drift"] {
            assert!(svg.contains(&format!(">\n{text}\n</text>")), "{text}");
        }
        assert!(svg.contains("<polyline"));
    }

    #[test]
    fn tick_labels() {
        assert_eq!(
            (number(0.0), number(12.5), number(0.25), number(2e6), number(1e-5)),
            ("0".into(), "12.5".into(), "0.25".into(), "2.0e6".into(), "1.0e-5".into())
        );
        assert_eq!(padded([1.0, 3.0].into_iter()), 0.9..3.1);
        assert_eq!(padded(std::iter::empty()), 0.0..1.0);
    }
}

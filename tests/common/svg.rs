//! A plot read back from its SVG: what was drawn, in the order it was drawn
//! (later shapes lie over earlier ones), panel by panel, and each legend
//! entry's swatch.

/// The plots' width, and where their legends start (`WIDTH - LEGEND_WIDTH`).
const LEGEND_LEFT: f64 = 960.0 - 170.0;

/// One drawn element.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// `polyline`, `polygon`, `rect`, `circle`, `line` or `text`.
    pub tag: String,
    pub stroke: Option<String>,
    pub fill: Option<String>,
    pub opacity: Option<String>,
    pub font_size: Option<String>,
    /// Whether it is turned (a vertical axis's name).
    pub turned: bool,
    /// A text's words.
    pub text: String,
    /// Its points in pixels: a line's or polygon's corners, a rectangle's
    /// corners, a circle's or a text's anchor.
    pub points: Vec<(f64, f64)>,
}

impl Shape {
    /// Whether it lies in the plot, not in the legend right of it.
    pub fn in_plot(&self) -> bool {
        self.points.iter().all(|p| p.0 < LEGEND_LEFT)
    }

    pub fn left(&self) -> f64 {
        self.points
            .iter()
            .map(|p| p.0)
            .fold(f64::INFINITY, f64::min)
    }

    pub fn right(&self) -> f64 {
        self.points
            .iter()
            .map(|p| p.0)
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// The highest point's y (pixels grow downwards).
    pub fn top(&self) -> f64 {
        self.points
            .iter()
            .map(|p| p.1)
            .fold(f64::INFINITY, f64::min)
    }

    pub fn bottom(&self) -> f64 {
        self.points
            .iter()
            .map(|p| p.1)
            .fold(f64::NEG_INFINITY, f64::max)
    }
}

fn number(text: &str) -> f64 {
    text.parse()
        .unwrap_or_else(|_| panic!("`{text}` is not a number"))
}

/// A whole picture's shapes, in drawing order.
pub struct Svg {
    pub shapes: Vec<Shape>,
}

impl Svg {
    pub fn parse(text: &str) -> Self {
        let document = roxmltree::Document::parse(text).expect("the plot is well-formed XML");
        let root = document.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        let shapes = root
            .children()
            .filter(roxmltree::Node::is_element)
            .map(|node| {
                let attribute = |name: &str| node.attribute(name).map(str::to_owned);
                let at = |x: &str, y: &str| {
                    (
                        number(node.attribute(x).unwrap()),
                        number(node.attribute(y).unwrap()),
                    )
                };
                let points = match node.tag_name().name() {
                    "polyline" | "polygon" => node
                        .attribute("points")
                        .unwrap()
                        .split_whitespace()
                        .map(|point| {
                            let (x, y) = point.split_once(',').unwrap();
                            (number(x), number(y))
                        })
                        .collect(),
                    "rect" => {
                        let (x, y) = at("x", "y");
                        let (w, h) = at("width", "height");
                        vec![(x, y), (x + w, y + h)]
                    }
                    "line" => vec![at("x1", "y1"), at("x2", "y2")],
                    "circle" => vec![at("cx", "cy")],
                    "text" => vec![at("x", "y")],
                    other => panic!("an unexpected <{other}> in the plot"),
                };
                Shape {
                    tag: node.tag_name().name().to_owned(),
                    stroke: attribute("stroke"),
                    fill: attribute("fill"),
                    opacity: attribute("opacity"),
                    font_size: attribute("font-size"),
                    turned: node.attribute("transform").is_some(),
                    text: node.text().unwrap_or("").trim().to_owned(),
                    points,
                }
            })
            .collect();
        Self { shapes }
    }

    /// The panel whose title is `title`: its shapes from the title to the
    /// next panel's (titles are the only texts of their size).
    pub fn panel(&self, title: &str) -> Panel<'_> {
        let start = self
            .shapes
            .iter()
            .position(|s| s.tag == "text" && s.text == title)
            .unwrap_or_else(|| panic!("no panel `{title}` in {:?}", self.titles()));
        let size = &self.shapes[start].font_size;
        let end = self.shapes[start + 1..]
            .iter()
            .position(|s| s.tag == "text" && &s.font_size == size)
            .map_or(self.shapes.len(), |n| start + 1 + n);
        Panel {
            shapes: &self.shapes[start..end],
        }
    }

    /// The panels' titles, top to bottom.
    pub fn titles(&self) -> Vec<&str> {
        let Some(first) = self.shapes.iter().filter(|s| s.tag == "text").nth(1) else {
            return Vec::new();
        };
        self.shapes
            .iter()
            .filter(|s| s.tag == "text" && s.font_size == first.font_size)
            .map(|s| s.text.as_str())
            .collect()
    }
}

/// One panel's shapes, in drawing order.
pub struct Panel<'a> {
    pub shapes: &'a [Shape],
}

impl Panel<'_> {
    /// The name of its vertical axis.
    pub fn axis(&self) -> &str {
        &self
            .shapes
            .iter()
            .find(|s| s.tag == "text" && s.turned)
            .expect("a named vertical axis")
            .text
    }

    /// Where in the drawing order the shapes in the plot (not the legend)
    /// that `matches` are.
    pub fn drawn(&self, matches: impl Fn(&Shape) -> bool) -> Vec<usize> {
        (0..self.shapes.len())
            .filter(|&i| self.shapes[i].in_plot() && matches(&self.shapes[i]))
            .collect()
    }

    /// The shapes in the plot that `matches`.
    pub fn plotted(&self, matches: impl Fn(&Shape) -> bool) -> Vec<&Shape> {
        self.drawn(matches)
            .into_iter()
            .map(|i| &self.shapes[i])
            .collect()
    }

    /// The legend's labels, top to bottom.
    pub fn legend(&self) -> Vec<&str> {
        self.shapes
            .iter()
            .filter(|s| s.tag == "text" && !s.in_plot())
            .map(|s| s.text.as_str())
            .collect()
    }

    /// The swatch left of the legend's `label`: the shapes drawn in the
    /// legend since the label above it.
    pub fn swatch(&self, label: &str) -> Vec<&Shape> {
        let at = self
            .shapes
            .iter()
            .position(|s| s.tag == "text" && !s.in_plot() && s.text == label)
            .unwrap_or_else(|| panic!("no `{label}` in the legend {:?}", self.legend()));
        let mut swatch: Vec<&Shape> = self.shapes[..at]
            .iter()
            .rev()
            .take_while(|s| s.tag != "text" && !s.in_plot())
            .collect();
        swatch.reverse();
        swatch
    }

    /// The plot's top edge: where its grid's vertical lines end.
    pub fn plot_top(&self) -> f64 {
        self.shapes
            .iter()
            .filter(|s| s.tag == "line")
            .map(Shape::top)
            .fold(f64::INFINITY, f64::min)
    }

    /// The vertical axis's marks, as written, top first.
    pub fn marks(&self) -> Vec<(f64, &str)> {
        let mut marks: Vec<(f64, &str)> = self
            .shapes
            .iter()
            .filter(|s| s.tag == "text" && !s.turned && s.in_plot())
            .filter(|s| s.points[0].0 < 64.0)
            .map(|s| (s.points[0].1, s.text.as_str()))
            .collect();
        marks.sort_by(|a, b| a.0.total_cmp(&b.0));
        marks
    }
}

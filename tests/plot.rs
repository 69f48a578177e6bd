//! The pictures of `simulate --plot`, and of `compare --plot` which shares
//! their drawing, read back from the SVG: the data over the reference lines,
//! `minReplicas` and `maxReplicas` told apart, the recommendation and the
//! stretches `maxReplicas` capped, each metric on its own axes in its unit,
//! and an axis that a spike would flatten cut with a note saying where.

mod common;

use std::path::Path;

use assert_cmd::Command;

use common::svg::{Panel, Shape, Svg};

/// The styles the plots use, as the SVG writes their colours.
const TARGET: &str = "#5A5A5A";
const MAX_REPLICAS: &str = "#464646";
const MIN_REPLICAS: &str = "#969696";
/// The first metric's lines, and the replicas.
const FIRST: &str = "#1F77B4";
const RECOMMENDATION: &str = "#2CA02C";
const CAPPED: &str = "#D62728";
const CUT: &str = "#780000";

fn hpa_lint(subcommand: &str) -> Command {
    let mut command = Command::cargo_bin("hpa-lint").expect("the binary is built");
    command
        .arg(subcommand)
        .arg("--isolated")
        .env_remove("HPA_LINT_KUBE_VERSION");
    command
}

/// The plot `hpa-lint SUBCOMMAND ARGS --plot FILE` draws.
fn plot(subcommand: &str, args: &[&str]) -> Svg {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plot.svg");
    let output = hpa_lint(subcommand)
        .args(args)
        .arg("--plot")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Svg::parse(&std::fs::read_to_string(&path).unwrap())
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

fn stroked(color: &'static str) -> impl Fn(&Shape) -> bool {
    move |shape| shape.stroke.as_deref() == Some(color)
}

fn filled(color: &'static str) -> impl Fn(&Shape) -> bool {
    move |shape| shape.tag != "text" && shape.fill.as_deref() == Some(color)
}

/// The shaded stretches where `maxReplicas` capped the count.
fn capped(shape: &Shape) -> bool {
    shape.tag == "rect" && shape.fill.as_deref() == Some(CAPPED)
}

/// How a line looks: its colour, width and the lengths of its dashes.
fn look(pieces: &[&Shape]) -> (Option<String>, Vec<f64>) {
    let color = pieces[0].stroke.clone();
    assert!(pieces.iter().all(|p| p.stroke == color), "{pieces:?}");
    let dashes = pieces.iter().map(|p| p.right() - p.left()).collect();
    (color, dashes)
}

/// The x pixel of a time in seconds, from the panel's time marks.
fn time_axis(panel: &Panel<'_>, marks: [(&str, f64); 2]) -> impl Fn(f64) -> f64 {
    let x = |label: &str| {
        panel
            .shapes
            .iter()
            .find(|s| s.tag == "text" && s.text == label && s.in_plot() && !s.turned)
            .unwrap_or_else(|| panic!("no time mark `{label}`"))
            .points[0]
            .0
    };
    let [(a, at_a), (b, at_b)] = marks;
    let (xa, xb) = (x(a), x(b));
    move |seconds| xa + (seconds - at_a) * (xb - xa) / (at_b - at_a)
}

/// The README's cart example: the per-pod CPU over its target, the replicas
/// over their bounds, and the recommendation above `maxReplicas` where it
/// capped the count (`TooManyReplicas` from 4m to 4m15s and from 6m to 14m).
#[test]
fn data_is_drawn_over_the_reference_lines_and_the_cap_is_marked() {
    let svg = plot(
        "simulate",
        &[
            "examples/shop/cart/cart.yaml",
            "--trace",
            "examples/traces/cart-cpu.csv",
            "--until",
            "40m",
        ],
    );
    assert_eq!(
        svg.titles(),
        [
            "cpu: demand, the workload's total",
            "cpu: per pod against its target",
            "replicas"
        ]
    );
    assert_eq!(
        svg.panel("cpu: demand, the workload's total").axis(),
        "cores"
    );

    let per_pod = svg.panel("cpu: per pod against its target");
    assert_eq!(per_pod.axis(), "% of request");
    assert_eq!(per_pod.legend(), ["cpu", "target 75 %"]);
    let target = per_pod.drawn(stroked(TARGET));
    let metric = per_pod.drawn(stroked(FIRST));
    assert!(!target.is_empty() && !metric.is_empty());
    assert!(
        target.iter().max() < metric.iter().min(),
        "the target is drawn first, under the metric"
    );

    let replicas = svg.panel("replicas");
    assert_eq!(replicas.axis(), "replicas");
    assert_eq!(
        replicas.legend(),
        [
            "replicas",
            "recommendation",
            "maxReplicas 9",
            "minReplicas 3",
            "held at maxReplicas",
            "held by stabilization",
            "limited by a policy"
        ]
    );
    let bounds = replicas.drawn(|s| stroked(MAX_REPLICAS)(s) || stroked(MIN_REPLICAS)(s));
    let lines = replicas.drawn(|s| stroked(FIRST)(s) || stroked(RECOMMENDATION)(s));
    assert!(
        bounds.iter().max() < lines.iter().min(),
        "the bounds are drawn first, under the replicas and the recommendation"
    );

    // minReplicas and maxReplicas look different, in the legend as in the plot.
    let (max, min) = (
        look(&replicas.swatch("maxReplicas 9")),
        look(&replicas.swatch("minReplicas 3")),
    );
    assert_ne!(max.0, min.0, "different colours");
    assert_ne!(max.1, min.1, "different dashes");
    let max_line = replicas.plotted(stroked(MAX_REPLICAS));
    let min_line = replicas.plotted(stroked(MIN_REPLICAS));
    assert_eq!(
        look(&replicas.swatch("maxReplicas 9")).0.as_deref(),
        Some(MAX_REPLICAS)
    );
    assert_eq!(
        look(&replicas.swatch("minReplicas 3")).0.as_deref(),
        Some(MIN_REPLICAS)
    );
    assert!(max_line.len() > 1 && min_line.len() > 1, "both dashed");
    let max_y = max_line[0].top();
    assert!(
        max_line
            .iter()
            .all(|s| s.top() == max_y && s.bottom() == max_y)
    );
    assert!(
        min_line.iter().all(|s| s.top() > max_y),
        "minReplicas is below"
    );

    // The recommendation (14 from 6m to 14m) rises above maxReplicas where
    // it capped the count, and those stretches are shaded under everything.
    let recommendation = replicas.plotted(stroked(RECOMMENDATION));
    assert!(
        recommendation
            .iter()
            .map(|s| s.top())
            .fold(f64::INFINITY, f64::min)
            < max_y
    );
    let bands = replicas.drawn(capped);
    assert_eq!(bands.len(), 2, "{:?}", replicas.plotted(capped));
    assert!(bands.iter().max() < bounds.iter().min());
    let x = time_axis(&replicas, [("0s", 0.0), ("40m", 2400.0)]);
    for (band, (from, to)) in replicas
        .plotted(capped)
        .into_iter()
        .zip([(240.0, 255.0), (360.0, 840.0)])
    {
        assert!(
            (band.left() - x(from)).abs() <= 1.0,
            "{band:?} from {from}s"
        );
        assert!((band.right() - x(to)).abs() <= 1.0, "{band:?} to {to}s");
    }
    assert_eq!(
        replicas.swatch("held at maxReplicas")[0].fill.as_deref(),
        Some(CAPPED)
    );
    assert!(svg.shapes.iter().all(|s| !filled(CUT)(s)), "nothing is cut");
}

/// The first sync of a run that starts at `minReplicas` under a load that
/// needs thirty pods: 40 cores over 3 pods that request 550m is 2,424 %, a
/// spike that would flatten six hours at 24 % to 72 %.
#[test]
fn an_axis_a_spike_would_flatten_is_cut_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "spike.csv", "time,cpu\n0,40\n1m,1.2\n");
    let svg = plot(
        "simulate",
        &[
            "examples/shop/cart/cart.yaml",
            "--trace",
            &trace,
            "--until",
            "6h",
        ],
    );
    let per_pod = svg.panel("cpu: per pod against its target");
    // The bulk is below 1.5 times the target (112.5 %): room above it,
    // rounded up to a mark.
    assert_eq!(per_pod.marks()[0].1, "140");
    assert_eq!(
        per_pod.legend(),
        [
            "cpu",
            "target 75 %",
            "cut above 140 %",
            "(peak 2,424 % at 0s)"
        ]
    );
    let top = per_pod.plot_top();
    let markers = per_pod.plotted(filled(CUT));
    assert_eq!(markers.len(), 1, "one stretch above the cut, at 0s");
    assert_eq!(markers[0].top(), top, "the marker's tip on the top edge");
    let x = time_axis(&per_pod, [("0s", 0.0), ("6h", 21600.0)]);
    assert!((markers[0].left() + markers[0].right()) / 2.0 - x(0.0) <= 1.0);
    assert!(
        per_pod
            .plotted(stroked(FIRST))
            .iter()
            .all(|s| s.top() >= top),
        "the metric is drawn inside the plot"
    );
    assert_eq!(
        per_pod.swatch("cut above 140 %")[0].fill.as_deref(),
        Some(CUT)
    );

    // The recommendation's spike (97 pods) too, and the demand's (40 cores
    // for a minute of six hours at 1.2).
    let replicas = svg.panel("replicas");
    assert_eq!(replicas.marks()[0].1, "10");
    let legend = replicas.legend();
    assert_eq!(
        legend[legend.len() - 2..],
        ["cut above 10", "(peak 97 at 0s)"]
    );
    let demand = svg.panel("cpu: demand, the workload's total");
    let legend = demand.legend();
    assert_eq!(
        legend[legend.len() - 2..],
        ["cut above 1.4 cores", "(peak 40 cores at 0s)"]
    );
}

const EVERY_KIND: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: web:1
        resources:
          requests: {cpu: 250m, memory: 256Mi}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 20
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 70}
  - type: Resource
    resource:
      name: memory
      target: {type: AverageValue, averageValue: 300Mi}
  - type: Pods
    pods:
      metric: {name: http_requests}
      target: {type: AverageValue, averageValue: \"40\"}
  - type: External
    external:
      metric: {name: queue_depth}
      target: {type: Value, value: \"100\"}
";

/// Each metric gets a panel for its demand and one for its value per pod,
/// each axis in the metric's unit.
#[test]
fn each_metric_has_its_own_axes_in_its_unit() {
    let dir = tempfile::tempdir().unwrap();
    let hpa = write(dir.path(), "web.yaml", EVERY_KIND);
    let trace = write(
        dir.path(),
        "load.csv",
        "time,cpu,memory,http_requests,queue_depth\n0,1.5,2Gi,150,80\n5m,3,2.5Gi,300,120\n",
    );
    let svg = plot("simulate", &[&hpa, "--trace", &trace, "--until", "10m"]);
    let axes: Vec<(&str, String)> = svg
        .titles()
        .into_iter()
        .map(|title| (title, svg.panel(title).axis().to_owned()))
        .collect();
    assert_eq!(
        axes,
        [
            ("cpu: demand, the workload's total", "cores".to_owned()),
            ("cpu: per pod against its target", "% of request".to_owned()),
            ("memory: demand, the workload's total", "GiB".to_owned()),
            (
                "memory: per pod against its target",
                "MiB per pod".to_owned()
            ),
            (
                "http_requests: demand, the workload's total",
                "http_requests".to_owned()
            ),
            (
                "http_requests: per pod against its target",
                "http_requests per pod".to_owned()
            ),
            ("queue_depth: demand", "queue_depth".to_owned()),
            (
                "queue_depth: value against its target",
                "queue_depth".to_owned()
            ),
            ("replicas", "replicas".to_owned()),
        ]
    );
    for (title, target) in [
        ("cpu: per pod against its target", "target 70 %"),
        ("memory: per pod against its target", "target 300 MiB"),
        ("http_requests: per pod against its target", "target 40"),
        ("queue_depth: value against its target", "target 100"),
    ] {
        assert_eq!(svg.panel(title).legend()[1], target);
    }
    // 2 GiB then 2.5 GiB in GiB.
    let memory = svg.panel("memory: demand, the workload's total");
    assert_eq!(memory.marks()[0].1, "2.5");
}

/// A trace of recommendations: the recommendation is drawn and the syncs
/// `maxReplicas` capped are shaded, as in metric mode.
#[test]
fn replicas_mode_marks_the_cap_too() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "replicas.csv", "time,replicas\n0,30\n");
    let svg = plot(
        "simulate",
        &[
            "examples/shop/cart/cart.yaml",
            "--trace",
            &trace,
            "--until",
            "2m",
        ],
    );
    assert_eq!(svg.titles(), ["replicas"]);
    let replicas = svg.panel("replicas");
    let max_y = replicas.plotted(stroked(MAX_REPLICAS))[0].top();
    let recommendation = replicas.plotted(stroked(RECOMMENDATION));
    assert!(recommendation[0].top() < max_y, "30 is drawn above 9");
    assert_eq!(replicas.plotted(capped).len(), 1);
}

/// `compare --plot` draws `maxReplicas` and `minReplicas` as `simulate --plot` does.
#[test]
fn compare_draws_the_bounds_as_simulate_does() {
    let dir = tempfile::tempdir().unwrap();
    let cart = std::fs::read_to_string("examples/shop/cart/cart.yaml").unwrap();
    let new = write(
        dir.path(),
        "new.yaml",
        &cart.replace("averageUtilization: 75", "averageUtilization: 60"),
    );
    let compared = plot(
        "compare",
        &["examples/shop/cart/cart.yaml", &new, "--load", "spike"],
    );
    let title = compared.titles()[0].to_owned();
    let compared = compared.panel(&title);
    let simulated = plot(
        "simulate",
        &[
            "examples/shop/cart/cart.yaml",
            "--trace",
            "examples/traces/cart-cpu.csv",
            "--until",
            "40m",
        ],
    );
    let simulated = simulated.panel("replicas");
    for (bound, value) in [("maxReplicas", 9), ("minReplicas", 3)] {
        assert_eq!(
            look(&compared.swatch(bound)),
            look(&simulated.swatch(&format!("{bound} {value}"))),
            "{bound}"
        );
    }
}

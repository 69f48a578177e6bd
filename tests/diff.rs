//! End-to-end tests of `hpa-lint diff`: git revisions read without touching
//! the work tree or the index, directories, HPAs matched by namespace and
//! name wherever their file moved, changes in effect only, the Markdown
//! comment of the example repository of docs/diff.md, the JSON contract, and bad
//! input (a clear error and exit code 2).

#[path = "diff/example.rs"]
mod example;

mod common;

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{Value, json};

fn hpa_lint(dir: &Path) -> Command {
    let mut command = Command::cargo_bin("hpa-lint").expect("the binary is built");
    command
        .current_dir(dir)
        .arg("diff")
        .arg("--isolated")
        .env_remove("HPA_LINT_KUBE_VERSION");
    command
}

/// Runs git in `dir` as a machine without configuration would, with fixed
/// names and dates so that commits are the same on every run.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Process::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Dev")
        .env("GIT_AUTHOR_EMAIL", "dev@example.com")
        .env("GIT_COMMITTER_NAME", "Dev")
        .env("GIT_COMMITTER_EMAIL", "dev@example.com")
        .env("GIT_AUTHOR_DATE", "2026-11-02T10:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-11-02T10:00:00Z")
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn commit_all(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

/// The example repository: `main` before the pull request, `feature` after
/// (checked out).
fn example_repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    example::base(root);
    commit_all(root, "Platform manifests");
    git(root, &["checkout", "-q", "-b", "feature"]);
    example::pull_request(root);
    commit_all(
        root,
        "Checkout ready for the sale; ledger and indexer tuned",
    );
    dir
}

fn json_of(command: &mut Command) -> Value {
    let output = command.args(["--format", "json"]).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn keys(document: &Value) -> Vec<(String, String)> {
    document["hpas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                format!(
                    "{}/{}",
                    h["namespace"].as_str().unwrap(),
                    h["name"].as_str().unwrap()
                ),
                h["change"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The three changes of the pull request, and only they: the moved ledger
/// HPA is one change, the auth HPA written out as the server defaults it is
/// none, and the indexer's new requests are a change of its own.
#[test]
fn example_pull_request_changes_three_hpas() {
    let repo = example_repository();
    let root = repo.path();
    let index = std::fs::read(root.join(".git/index")).unwrap();
    let document = json_of(hpa_lint(root).args(["main", "feature", "--load", "step"]));
    assert_eq!(
        keys(&document),
        [
            ("payments/ledger".to_owned(), "changed".to_owned()),
            ("search/indexer".to_owned(), "changed".to_owned()),
            ("shop/checkout".to_owned(), "changed".to_owned()),
        ]
    );
    assert_eq!(
        document["counts"],
        json!({"base": 20, "head": 20, "unchanged": 17})
    );
    assert_eq!(document["base"]["revision"], "main");
    assert_eq!(document["base"]["commit"].as_str().unwrap().len(), 40);
    let ledger = &document["hpas"][0];
    assert_eq!(ledger["base"]["file"], "apps/payments/ledger/hpa.yaml");
    assert_eq!(
        ledger["head"]["file"],
        "apps/payments/ledger/autoscaling.yaml"
    );
    assert_eq!(ledger["base"]["behavior"]["scaleDown"]["seconds"], 1200);
    assert_eq!(ledger["head"]["behavior"]["scaleDown"]["seconds"], 90);
    let indexer = &document["hpas"][1];
    assert_eq!(
        indexer["fields"],
        json!([
            {"field": "spec.metrics[0].resource.target.averageUtilization", "before": "60", "after": "85"},
            {"field": "requests of the target (cpu)", "before": "500m", "after": "1"}
        ])
    );
    // Pods twice as large at 85 % instead of 60 %: at 6 pods, far more
    // capacity, so much less time above target.
    let summary = &indexer["comparisons"][0]["summary"];
    assert_eq!(summary["old"]["aboveTarget"], 600);
    assert_eq!(summary["new"]["aboveTarget"], 45);
    let checkout = &document["hpas"][2];
    assert_eq!(checkout["comparisons"][0]["demand"]["load"]["kind"], "step");
    assert_eq!(checkout["base"]["behavior"]["maxReplicas"], 12);
    assert_eq!(checkout["head"]["behavior"]["maxReplicas"], 24);
    // Read from git alone: the work tree and the index are as they were.
    assert_eq!(git(root, &["status", "--porcelain"]), "");
    assert_eq!(std::fs::read(root.join(".git/index")).unwrap(), index);
}

/// The example comment of docs/diff.md and plot are what the binary writes now
/// (`UPDATE_DOCS=1 cargo test --test diff` rewrites them).
#[test]
fn page_example_is_current() {
    let repo = example_repository();
    let root = repo.path();
    let output = hpa_lint(root)
        .args([
            "main",
            "--format",
            "markdown",
            "--plot-dir",
            "hpa-lint-plots",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let comment = String::from_utf8(output.stdout).unwrap();
    let quoted: String = comment
        .lines()
        .map(|line| {
            if line.is_empty() {
                ">\n".to_owned()
            } else {
                format!("> {line}\n")
            }
        })
        .collect();
    let svg = std::fs::read_to_string(root.join("hpa-lint-plots/shop/checkout.svg")).unwrap();
    let page_path = Path::new("docs/diff.md");
    let page = std::fs::read_to_string(page_path).unwrap();
    let (start, end) = ("<!-- diff-example:start -->\n", "<!-- diff-example:end -->");
    let before = &page[..page.find(start).expect("docs/diff.md has the example") + start.len()];
    let after = &page[page.find(end).expect("the example ends")..];
    let svg_path = Path::new("examples/pull-request/checkout.svg");
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(page_path, format!("{before}{quoted}{after}")).unwrap();
        std::fs::create_dir_all(svg_path.parent().unwrap()).unwrap();
        std::fs::write(svg_path, &svg).unwrap();
        return;
    }
    assert_eq!(
        &page[before.len()..page.len() - after.len()],
        quoted,
        "docs/diff.md's diff example is stale: run `UPDATE_DOCS=1 cargo test --test diff`"
    );
    assert_eq!(
        std::fs::read_to_string(svg_path).unwrap(),
        svg,
        "{} is stale: run `UPDATE_DOCS=1 cargo test --test diff`",
        svg_path.display()
    );
}

/// Without HEAD the work tree is the head side, uncommitted edits included;
/// `-- PATH` keeps to part of the tree, and an HPA added or removed is one.
#[test]
fn work_tree_paths_and_added_or_removed() {
    let repo = example_repository();
    let root = repo.path();
    std::fs::remove_dir_all(root.join("apps/analytics/reports")).unwrap();
    let added = root.join("apps/analytics/exports");
    std::fs::create_dir_all(&added).unwrap();
    std::fs::write(
        added.join("hpa.yaml"),
        "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: exports, namespace: analytics}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: exports}
  minReplicas: 1
  maxReplicas: 3
",
    )
    .unwrap();
    let output = hpa_lint(root)
        .args(["feature", "--format", "json", "--", "apps/analytics"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        keys(&document),
        [
            ("analytics/exports".to_owned(), "added".to_owned()),
            ("analytics/reports".to_owned(), "removed".to_owned()),
        ]
    );
    assert_eq!(document["head"], json!({"directory": "."}));
    assert_eq!(
        document["counts"],
        json!({"base": 2, "head": 2, "unchanged": 1})
    );
    let exports = &document["hpas"][0];
    assert_eq!(exports["base"], Value::Null);
    assert_eq!(exports["head"]["file"], "apps/analytics/exports/hpa.yaml");
    assert_eq!(exports["comparisons"], json!([]));
    let text = hpa_lint(root)
        .args(["feature", "--", "apps/analytics"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.starts_with("feature (",));
    assert!(text.contains("the work tree: 2 HorizontalPodAutoscalers before, 2 after; 0 changed, 1 added, 1 removed, 1 unchanged."), "{text}");
    assert!(
        text.contains(
            "HorizontalPodAutoscaler analytics/reports (apps/analytics/reports/hpa.yaml): removed"
        ),
        "{text}"
    );
}

/// Two directories compare as two revisions do.
#[test]
fn directories_are_trees_too() {
    let dir = tempfile::tempdir().unwrap();
    let (base, head) = (dir.path().join("base"), dir.path().join("head"));
    example::base(&base);
    example::base(&head);
    example::pull_request(&head);
    let document = json_of(hpa_lint(dir.path()).args(["base", "head", "--load", "spike"]));
    assert_eq!(keys(&document).len(), 3);
    assert_eq!(document["base"], json!({"directory": "base"}));
    assert_eq!(
        document["hpas"][0]["head"]["file"],
        "apps/payments/ledger/autoscaling.yaml"
    );
}

/// An HPA the API server would reject on the head side: the report is
/// whole, says why, and the exit code is 2; a rejected one removed is fine.
#[test]
fn rejected_hpa_on_one_side() {
    let repo = example_repository();
    let root = repo.path();
    let hpa = root.join("apps/shop/cart/hpa.yaml");
    let text = std::fs::read_to_string(&hpa).unwrap();
    std::fs::write(&hpa, text.replace("maxReplicas: 12", "maxReplicas: 1")).unwrap();
    let output = hpa_lint(root)
        .args(["feature", "--format", "markdown", "--load", "step"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let comment = String::from_utf8(output.stdout).unwrap();
    assert!(comment.contains("### `shop/cart` (changed)"), "{comment}");
    assert!(
        comment.contains("**refused** by the API server: spec.maxReplicas: "),
        "{comment}"
    );
    assert!(
        comment.contains("No comparison: refused by the API server"),
        "{comment}"
    );
    assert!(comment.ends_with("</sub>\n"), "the comment is whole");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("hpa-lint: head: HorizontalPodAutoscaler shop/cart (apps/shop/cart/hpa.yaml): refused, the API server would reject it:"),
        "{stderr}"
    );
    // Committed, then removed: no trouble.
    commit_all(root, "broken");
    std::fs::remove_file(&hpa).unwrap();
    hpa_lint(root)
        .args(["HEAD", "--load", "step"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "shop/cart (apps/shop/cart/hpa.yaml): removed",
        ));
}

#[test]
fn bad_revisions_and_arguments() {
    let repo = example_repository();
    let root = repo.path();
    for (args, wanted) in [
        (
            vec!["no-such-branch"],
            "`no-such-branch` is neither a directory nor a revision of this git repository",
        ),
        (
            vec!["main", "main..feature"],
            "`main..feature` is neither a directory nor a revision",
        ),
        (vec!["main", "--trace", "cpu.csv"], "--hpa"),
        (
            vec!["main", "--load", "step:at=soon"],
            "invalid duration `soon`",
        ),
    ] {
        hpa_lint(root)
            .args(&args)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(wanted));
    }
    let outside = tempfile::tempdir().unwrap();
    hpa_lint(outside.path())
        .arg("main")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "`main` is not a directory, and the current directory is not in a git repository",
        ));
    // A file git cannot parse as YAML is reported as the linter reports it,
    // and does not stop the diff.
    std::fs::write(root.join("apps/broken.yaml"), "a: [\n").unwrap();
    hpa_lint(root)
        .args(["feature", "--load", "step"])
        .assert()
        .success();
}

/// A trace is one workload's: with `--hpa`, its HPA is compared on it too.
#[test]
fn trace_with_hpa() {
    let repo = example_repository();
    let root = repo.path();
    let trace: PathBuf = root.join("cpu.csv");
    std::fs::write(&trace, "time,cpu\n0,1\n10m,6\n30m,2\n1h,2\n").unwrap();
    let document = json_of(hpa_lint(root).args([
        "main",
        "feature",
        "--hpa",
        "shop/checkout",
        "--load",
        "step",
        "--trace",
        "cpu.csv",
    ]));
    assert_eq!(
        keys(&document),
        [("shop/checkout".to_owned(), "changed".to_owned())]
    );
    let comparisons = document["hpas"][0]["comparisons"].as_array().unwrap();
    assert_eq!(comparisons.len(), 2);
    assert_eq!(comparisons[1]["demand"], json!({"trace": ["cpu.csv"]}));
    assert_eq!(comparisons[1]["end"], 3600);
}

/// An HPA whose target is not in the tree (its Deployment rendered by Helm,
/// say) is compared on the standard loads with an assumed request, which
/// the replicas do not depend on, and said so; one whose pods request no CPU
/// for a CPU-utilization target cannot be driven by a load: said, no error.
#[test]
fn targets_missing_or_without_requests() {
    let dir = tempfile::tempdir().unwrap();
    for side in ["base", "head"] {
        let root = dir.path().join(side);
        example::base(&root);
        if side == "head" {
            example::pull_request(&root);
        }
        std::fs::remove_file(root.join("apps/shop/checkout/deployment.yaml")).unwrap();
        let deployment = root.join("apps/search/indexer/deployment.yaml");
        let text = std::fs::read_to_string(&deployment).unwrap();
        let without = text.replace("cpu: 500m, ", "").replace("cpu: \"1\", ", "");
        assert_ne!(text, without);
        std::fs::write(&deployment, without).unwrap();
    }
    let root = dir.path();
    let document = json_of(hpa_lint(root).args(["base", "head", "--load", "step"]));
    let checkout = &document["hpas"][2];
    assert_eq!(checkout["name"], "checkout");
    assert_eq!(
        checkout["comparisons"][0]["demand"]["assumedRequests"],
        json!(["cpu"])
    );
    // The same figures as with the Deployment's 500m.
    let known = tempfile::tempdir().unwrap();
    example::base(&known.path().join("base"));
    example::base(&known.path().join("head"));
    example::pull_request(&known.path().join("head"));
    let known = json_of(hpa_lint(known.path()).args([
        "base",
        "head",
        "--load",
        "step",
        "--hpa",
        "shop/checkout",
    ]));
    assert_eq!(
        checkout["comparisons"][0]["summary"],
        known["hpas"][0]["comparisons"][0]["summary"]
    );
    assert_eq!(
        checkout["comparisons"][0]["summary"]["new"]["peakReplicas"],
        24
    );
    let indexer = &document["hpas"][1];
    assert_eq!(
        indexer["error"],
        "both specs: the controller cannot compute the cpu utilization (missing request for cpu in container app of Pod of the target): every sync fails its metrics, so the HPA never scales"
    );
    let markdown = hpa_lint(root)
        .args(["base", "head", "--load", "step", "--format", "markdown"])
        .output()
        .unwrap();
    assert!(markdown.status.success());
    let markdown = String::from_utf8(markdown.stdout).unwrap();
    assert!(markdown.contains("the target is not in the input: a pod's cpu request is taken as 1 (the replicas do not depend on it, the totals do)"), "{markdown}");
    // A trace is in cores: without the requests there is nothing to divide.
    std::fs::write(root.join("cpu.csv"), "time,cpu\n0,1\n10m,6\n").unwrap();
    hpa_lint(root)
        .args(["base", "head", "--hpa", "shop/checkout", "--load", "step", "--trace", "cpu.csv"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no comparison: the target Deployment `checkout` is not in the input: give the pods' requests with --requests cpu=",
        ));
}

/// Issue 16: the HPAs in file order, as `git diff` lists files (an HPA
/// removed in the base's file), each file's in document order, not by name.
#[test]
fn hpas_are_listed_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let hpa = |name: &str, max: u32| {
        format!(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: {name}, namespace: shop}}\n\
             spec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {name}}}\n  \
             maxReplicas: {max}\n"
        )
    };
    for (tree, max) in [("base", 4), ("head", 6)] {
        std::fs::create_dir(root.join(tree)).unwrap();
        let both = format!("{}---\n{}", hpa("zeta", max), hpa("beta", max));
        std::fs::write(root.join(tree).join("z.yaml"), both).unwrap();
    }
    std::fs::write(root.join("base/a.yaml"), hpa("alpha", 4)).unwrap();
    let document = json_of(hpa_lint(root).args(["base", "head", "--load", "step"]));
    let names: Vec<&str> = document["hpas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alpha", "zeta", "beta"]);
}

/// A target in one tree only serves both sides, for the requests line too:
/// no change is shown where both sides read the same pods.
#[test]
fn a_target_in_one_tree_reads_the_same_requests_on_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    for requests in ["", ", resources: {requests: {cpu: 200m}}"] {
        let deployment = format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: shop}}\n\
             spec:\n  template:\n    spec:\n      containers: [{{name: app, image: web{requests}}}]\n"
        );
        for (side, text) in [
            ("base", common::cpu_hpa(50) + &deployment),
            ("head", common::cpu_hpa(80)),
        ] {
            std::fs::create_dir_all(dir.path().join(side)).unwrap();
            std::fs::write(dir.path().join(side).join("web.yaml"), text).unwrap();
        }
        let document = json_of(hpa_lint(dir.path()).args(["base", "head", "--load", "step"]));
        let fields = &document["hpas"][0]["fields"];
        assert_eq!(
            fields,
            &json!([{"field": "spec.metrics[0].resource.target.averageUtilization", "before": "50", "after": "80"}]),
            "{requests}"
        );
    }
}

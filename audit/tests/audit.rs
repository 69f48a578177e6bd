//! `kubectl hpa-lint` against the API-server stand-in: findings, output
//! formats, exit codes, scoping, pagination, refused and absent kinds.

mod common;

use common::{Stage, findings, shop, stderr, stdout};

#[test]
fn smoke() {
    let stage = Stage::new(shop());
    let output = stage.audit(&["-A"]);
    println!("{}\n{}\n{:?}", stdout(&output), stderr(&output), output.status);
    println!("{:#?}", stage.standin.requests());
    println!("{:?}", findings(&stage.audit(&["-A", "--format", "json"])));
    panic!();
}

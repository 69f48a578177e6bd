use anyhow::Result;
use clap::Args;
#[derive(Debug, Args)]
pub struct SimulateArgs {}
pub fn run(_args: &SimulateArgs) -> Result<u8> {
    Ok(0)
}

//! One writer among the replicas: a `coordination.k8s.io/v1` Lease, held
//! with kube-lease-manager (the Lease crate that fits kube 5: it takes a
//! free Lease with a server-side apply that conflicts when another replica
//! took it first, renews it `renew` seconds before it expires, and takes over
//! an expired one).
//!
//! Two things are added here. Leadership ends at once on any failure to talk
//! to the API server (kube-lease-manager would keep reporting the lock it
//! can no longer renew): a replica cut off from the API server stops writing
//! before its Lease can expire and another replica take it. And on shutdown
//! the Lease is released, so that another replica takes over at its next
//! look instead of after the expiry.

use std::time::Duration;

use kube::Client;
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};
use tokio::sync::watch;

/// Which Lease, held how.
#[derive(Clone, Debug)]
pub struct LeaseOptions {
    /// The Lease's name.
    pub name: String,
    /// Its namespace (the release's).
    pub namespace: String,
    /// This replica's identity (its pod's name).
    pub identity: String,
    /// Seconds a holder keeps the Lease without renewing it.
    pub duration: u64,
    /// Seconds before the expiry the holder renews it.
    pub renew: u64,
}

/// Holds the Lease when it can, until `stop` turns true; `leading` says
/// whether this replica holds it. Releases it on the way out.
pub async fn hold(
    client: Client,
    options: LeaseOptions,
    leading: watch::Sender<bool>,
    mut stop: watch::Receiver<bool>,
) {
    let mut failing = false;
    let retry = Duration::from_secs(options.renew.max(1));
    loop {
        let built = LeaseManagerBuilder::new(client.clone(), &options.name)
            .with_namespace(&options.namespace)
            .with_identity(&options.identity)
            .with_duration(options.duration)
            .with_grace(options.renew)
            .build();
        let manager = tokio::select! {
            built = built => built,
            _ = stop.wait_for(|stop| *stop) => return,
        };
        match manager {
            Ok(manager) => {
                if std::mem::take(&mut failing) {
                    tracing::info!(lease = %options.name, "Lease reachable again");
                }
                if follow(&manager, &options, &leading, &mut stop).await {
                    if let Err(error) = manager.release().await {
                        tracing::warn!(%error, "releasing the Lease on shutdown");
                    }
                    return;
                }
            }
            Err(error) if !failing => {
                failing = true;
                tracing::warn!(lease = %options.name, namespace = %options.namespace, error = %error, "cannot reach the Lease; retrying (reports and Events wait)");
            }
            Err(_) => {}
        }
        tokio::select! {
            () = tokio::time::sleep(retry) => {}
            _ = stop.wait_for(|stop| *stop) => return,
        }
    }
}

/// Follows the Lease's holder until an error (`false`) or `stop` (`true`).
async fn follow(
    manager: &LeaseManager,
    options: &LeaseOptions,
    leading: &watch::Sender<bool>,
    stop: &mut watch::Receiver<bool>,
) -> bool {
    loop {
        tokio::select! {
            changed = manager.changed() => match changed {
                Ok(holds) => {
                    leading.send_replace(holds);
                    tracing::info!(lease = %options.name, identity = %options.identity, "{}", if holds { "holding the Lease: writing reports and Events" } else { "another replica holds the Lease" });
                }
                Err(error) => {
                    if leading.send_replace(false) {
                        tracing::warn!(%error, "cannot renew the Lease: stopped writing reports and Events");
                    } else {
                        tracing::debug!(%error, "Lease");
                    }
                    return false;
                }
            },
            _ = stop.wait_for(|stop| *stop) => {
                leading.send_replace(false);
                return true;
            }
        }
    }
}

//! Every rule, one per file. [`ALL`] is the registry: input rules first, then the
//! API-server rules in the order the server emits its errors, then the rest.

pub mod duplicate_key;
pub mod helm_template;
pub mod invalid_field_type;
pub mod invalid_quantity;
pub mod invalid_replicas;
pub mod invalid_scaling_policy;
pub mod invalid_select_policy;
pub mod invalid_stabilization_window;
pub mod invalid_suppression;
pub mod invalid_tolerance;
pub mod invalid_yaml;
pub mod min_equals_max;
pub mod scaling_disabled;
pub mod unknown_field;

use crate::registry::Rule;

/// Every rule, in documentation order.
pub static ALL: &[&Rule] = &[
    &invalid_yaml::RULE,
    &duplicate_key::RULE,
    &helm_template::RULE,
    &invalid_suppression::RULE,
    &unknown_field::RULE,
    &invalid_field_type::RULE,
    &invalid_quantity::RULE,
    &invalid_replicas::RULE,
    &invalid_stabilization_window::RULE,
    &invalid_select_policy::RULE,
    &invalid_scaling_policy::RULE,
    &invalid_tolerance::RULE,
    &min_equals_max::RULE,
    &scaling_disabled::RULE,
];

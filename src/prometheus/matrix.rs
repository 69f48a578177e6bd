//! Prometheus' `query_range` answer (a `matrix`), read the same way from a
//! live response and from a file saved from one, and the sum of its series
//! at each time.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Deserialize;

use super::time::{UnixMillis, format};
use crate::emit::escaped;

/// One series: its labels and its samples, times increasing. `NaN` values
/// are kept here; [`Matrix::sum`] treats them as missing.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub labels: BTreeMap<String, String>,
    pub samples: Vec<(UnixMillis, f64)>,
}

impl Series {
    /// `{container="web", pod="web-1"}`, as Prometheus writes a series.
    pub fn describe(&self) -> String {
        let mut text = String::from("{");
        for (i, (name, value)) in self.labels.iter().enumerate() {
            let separator = if i == 0 { "" } else { ", " };
            let _ = write!(text, "{separator}{}=\"{}\"", escaped(name), escaped(value));
        }
        text + "}"
    }
}

/// A `query_range` answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Matrix {
    pub series: Vec<Series>,
    /// Prometheus' `warnings` and `infos`, as it wrote them.
    pub warnings: Vec<String>,
}

/// Why a text is not a `query_range` answer. The messages do not name the
/// source; the caller does.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ParseError {
    #[error("not JSON (line {line}, column {column}): {message}")]
    NotJson {
        line: usize,
        column: usize,
        message: String,
    },
    /// `"status": "error"`: Prometheus' own error.
    #[error("Prometheus answered with an error: {error_type}: {error}")]
    Prometheus { error_type: String, error: String },
    #[error(
        "not a Prometheus `query_range` response: expected `data.resultType` `matrix`, found {found}"
    )]
    NotMatrix { found: String },
    #[error("data.result[{series}]: {message}")]
    Series { series: usize, message: String },
    #[error("data.result[{series}].values[{sample}]: {message}")]
    Sample {
        series: usize,
        sample: usize,
        message: String,
    },
}

#[derive(Deserialize)]
struct Response<'a> {
    status: Option<String>,
    #[serde(borrow)]
    data: Option<Data<'a>>,
    #[serde(rename = "errorType")]
    error_type: Option<String>,
    error: Option<String>,
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default)]
    infos: Vec<String>,
}

#[derive(Deserialize)]
struct Data<'a> {
    #[serde(rename = "resultType")]
    result_type: Option<String>,
    #[serde(borrow, default)]
    result: Vec<RawSeries<'a>>,
}

#[derive(Deserialize)]
struct RawSeries<'a> {
    #[serde(default)]
    metric: BTreeMap<String, String>,
    #[serde(borrow)]
    values: Option<Vec<(f64, Cow<'a, str>)>>,
    histograms: Option<serde::de::IgnoredAny>,
}

/// Reads a `query_range` answer.
pub fn parse(bytes: &[u8]) -> Result<Matrix, ParseError> {
    let response: Response<'_> =
        serde_json::from_slice(bytes).map_err(|e| ParseError::NotJson {
            line: e.line(),
            column: e.column(),
            message: e
                .to_string()
                .split(" at line ")
                .next()
                .unwrap_or("")
                .to_owned(),
        })?;
    if response.status.as_deref() == Some("error") {
        // Prometheus' words, shown and never obeyed.
        return Err(ParseError::Prometheus {
            error_type: escaped(&response.error_type.unwrap_or_else(|| "error".to_owned())),
            error: escaped(&response.error.unwrap_or_default()),
        });
    }
    let Some(data) = response.data else {
        return Err(ParseError::NotMatrix {
            found: "no `data`".to_owned(),
        });
    };
    match data.result_type.as_deref() {
        Some("matrix") => {}
        Some(other) => {
            return Err(ParseError::NotMatrix {
                found: format!("`{other}` (an instant query's answer?)"),
            });
        }
        None => {
            return Err(ParseError::NotMatrix {
                found: "none".to_owned(),
            });
        }
    }
    let mut series = Vec::with_capacity(data.result.len());
    for (i, raw) in data.result.into_iter().enumerate() {
        let Some(values) = raw.values else {
            let message = if raw.histograms.is_some() {
                "native histograms are not a demand: query a number, e.g. with `histogram_sum`"
            } else {
                "no `values`"
            };
            return Err(ParseError::Series {
                series: i,
                message: message.to_owned(),
            });
        };
        let mut samples: Vec<(UnixMillis, f64)> = Vec::with_capacity(values.len());
        for (j, (time, text)) in values.into_iter().enumerate() {
            let at = |message: String| ParseError::Sample {
                series: i,
                sample: j,
                message,
            };
            let time = (time * 1000.0).round();
            if !time.is_finite() || time.abs() > 1e17 {
                return Err(at("the time is not a Unix time in seconds".to_owned()));
            }
            let time = time as UnixMillis;
            if samples
                .last()
                .is_some_and(|(previous, _)| time <= *previous)
            {
                return Err(at("times must increase".to_owned()));
            }
            let value = text
                .parse::<f64>()
                .map_err(|_| at(format!("`{text}` is not a number")))?;
            samples.push((time, value));
        }
        series.push(Series {
            labels: raw.metric,
            samples,
        });
    }
    let warnings = response
        .warnings
        .iter()
        .chain(&response.infos)
        .map(|w| escaped(w))
        .collect();
    Ok(Matrix { series, warnings })
}

/// A sample that cannot be part of a demand.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("the series {series} is {} at {}: a demand is a finite number", if *.value > 0.0 { "+Inf" } else { "-Inf" }, format(*.time))]
pub struct InfiniteSample {
    pub series: String,
    pub time: UnixMillis,
    pub value: f64,
}

impl Matrix {
    /// Adds the samples of `other` (the same query over a later range).
    pub fn extend(&mut self, other: Matrix) {
        for series in other.series {
            match self.series.iter_mut().find(|s| s.labels == series.labels) {
                Some(known) => known.samples.extend(series.samples),
                None => self.series.push(series),
            }
        }
        self.warnings.extend(other.warnings);
    }

    /// The sum of the series at each time where at least one has a number:
    /// a series without a sample at a time (a pod that is gone, or not there
    /// yet) or with `NaN` there adds nothing. An infinite sample is an error.
    pub fn sum(&self) -> Result<Vec<(UnixMillis, f64)>, InfiniteSample> {
        let mut total: Vec<(UnixMillis, f64)> = Vec::new();
        for series in &self.series {
            if let Some(&(time, value)) = series.samples.iter().find(|(_, v)| v.is_infinite()) {
                return Err(InfiniteSample {
                    series: series.describe(),
                    time,
                    value,
                });
            }
            let samples = series.samples.iter().filter(|(_, v)| !v.is_nan());
            total = merge_add(&total, samples);
        }
        Ok(total)
    }
}

/// `sum` and `samples` merged by time, adding the values of equal times; both
/// sorted by time.
fn merge_add<'a>(
    sum: &[(UnixMillis, f64)],
    samples: impl Iterator<Item = &'a (UnixMillis, f64)>,
) -> Vec<(UnixMillis, f64)> {
    let mut merged = Vec::with_capacity(sum.len());
    let mut sum = sum.iter().peekable();
    for &(time, value) in samples {
        while let Some(&&earlier) = sum.peek().filter(|(t, _)| *t < time) {
            merged.push(earlier);
            sum.next();
        }
        match sum.peek() {
            Some(&&(t, total)) if t == time => {
                merged.push((time, total + value));
                sum.next();
            }
            _ => merged.push((time, value)),
        }
    }
    merged.extend(sum);
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(series: &str) -> String {
        format!(r#"{{"status":"success","data":{{"resultType":"matrix","result":[{series}]}}}}"#)
    }

    #[test]
    fn sums_series_where_they_have_numbers() {
        let text = matrix(
            r#"{"metric":{"pod":"a"},"values":[[100,"1"],[115,"2"],[130,"NaN"]]},
               {"metric":{"pod":"b"},"values":[[115,"0.5"],[130,"0.25"],[145,"1e3"]]},
               {"metric":{"pod":"c"},"values":[[130,"NaN"],[160,"NaN"]]}"#,
        );
        let matrix = parse(text.as_bytes()).unwrap();
        assert_eq!(matrix.series.len(), 3);
        assert_eq!(
            matrix.sum().unwrap(),
            [
                (100_000, 1.0),
                (115_000, 2.5),
                (130_000, 0.25),
                (145_000, 1000.0)
            ]
        );
    }

    #[test]
    fn an_infinite_sample_names_its_series_and_time() {
        let text =
            matrix(r#"{"metric":{"pod":"a","container":"web"},"values":[[1735689600,"+Inf"]]}"#);
        let error = parse(text.as_bytes()).unwrap().sum().unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"the series {container="web", pod="a"} is +Inf at 2025-01-01T00:00:00Z: a demand is a finite number"#
        );
    }

    #[test]
    fn reads_prometheus_errors_and_refuses_other_answers() {
        let error = parse(br#"{"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected end of input"}"#);
        assert_eq!(
            error.unwrap_err().to_string(),
            "Prometheus answered with an error: bad_data: 1:5: parse error: unexpected end of input"
        );
        let vector = r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"1"]}]}}"#;
        assert!(matches!(
            parse(vector.as_bytes()),
            Err(ParseError::NotMatrix { .. })
        ));
        assert!(matches!(
            parse(b"{\"status\":"),
            Err(ParseError::NotJson { line: 1, .. })
        ));
        let histogram = matrix(r#"{"metric":{},"histograms":[[1,{"count":"1"}]]}"#);
        assert!(
            parse(histogram.as_bytes())
                .unwrap_err()
                .to_string()
                .contains("native histograms")
        );
        for (values, message) in [
            (
                r#"[[2,"1"],[1,"1"]]"#,
                "data.result[0].values[1]: times must increase",
            ),
            (
                r#"[[1,"x"]]"#,
                "data.result[0].values[0]: `x` is not a number",
            ),
        ] {
            let text = matrix(&format!(r#"{{"metric":{{}},"values":{values}}}"#));
            assert_eq!(parse(text.as_bytes()).unwrap_err().to_string(), message);
        }
    }

    #[test]
    fn keeps_warnings_and_extends_by_labels() {
        let first = r#"{"status":"success","warnings":["PromQL info: metric might not be a counter"],"data":{"resultType":"matrix","result":[{"metric":{"pod":"a"},"values":[[1,"1"]]}]}}"#;
        let mut matrix = parse(first.as_bytes()).unwrap();
        let second = parse(
            self::matrix(
                r#"{"metric":{"pod":"a"},"values":[[2,"2"]]},{"metric":{"pod":"b"},"values":[[2,"3"]]}"#,
            )
            .as_bytes(),
        )
        .unwrap();
        matrix.extend(second);
        assert_eq!(
            matrix.warnings,
            ["PromQL info: metric might not be a counter"]
        );
        assert_eq!(matrix.series[0].samples, [(1000, 1.0), (2000, 2.0)]);
        assert_eq!(matrix.sum().unwrap(), [(1000, 1.0), (2000, 5.0)]);
    }
}

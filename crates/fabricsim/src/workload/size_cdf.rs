//! Flow-size distributions given as a CDF file, for open-loop workloads ([`super::open_loop`]).
//!
//! **Follows:** seqbalance §5.2 "Workloads (Fig. 9)": the AliStorage2019 and WebSearch tables,
//! "piecewise-linear interpolation between the points" (the HPCC simulator's traffic files).
//!
//! **Format:** one `size cdf` pair per line, whitespace separated; `#` starts a comment (whole
//! line or trailing) and blank lines are skipped. Sizes are bytes, CDF values are fractions
//! ending at 1 or percents ending at 100 (the last value decides which). Sizes and CDF values
//! must not decrease. A first CDF value above 0 is a point mass at the first size; two rows
//! with the same size are a point mass there (a step in the CDF).
//!
//! **Sampling:** inverse-CDF from one uniform draw u ∈ [0, 1): the segment with
//! `cdf[i−1] ≤ u < cdf[i]` is interpolated linearly, so u at a breakpoint gives exactly that
//! breakpoint's size. The size is rounded to whole bytes and is at least 1.
//!
//! **Built-ins:** `"alistorage2019"` and `"websearch"` are the spec's tables, shipped in
//! `data/cdf/` with their provenance and embedded in the binary so a run works from any
//! directory; any other name is a file path relative to the scenario file.

use crate::error::{Error, Result};
use crate::rng::Rng;
use crate::excerpt::clip;
use crate::workload::InputFiles;

/// Built-in distributions: (name, file text).
pub const BUILT_IN: &[(&str, &str)] = &[
    ("alistorage2019", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/cdf/alistorage2019.cdf"))),
    ("websearch", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/cdf/websearch.cdf"))),
];

/// A piecewise-linear flow-size distribution.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    /// Breakpoint sizes (bytes), non-decreasing.
    sizes: Vec<f64>,
    /// CDF at each breakpoint as a fraction, non-decreasing, the last exactly 1.
    cdf: Vec<f64>,
}

/// Scenario key every CDF error names.
const KEY: &str = "workload.cdf";

fn bad(file: &str, line: usize, msg: impl std::fmt::Display) -> Error {
    Error::invalid(KEY, format!("{file}:{line}: {msg}"))
}

impl SizeCdf {
    /// The distribution `name`: a built-in name, or a file read through `files`.
    pub fn resolve(name: &str, files: &InputFiles) -> Result<SizeCdf> {
        let built_in_names = || BUILT_IN.iter().map(|(n, _)| format!("\"{n}\"")).collect::<Vec<_>>().join(", ");
        if name.is_empty() {
            return Err(Error::invalid(KEY, format!("missing: name a flow-size distribution, {} or a CDF file", built_in_names())));
        }
        if let Some((n, text)) = BUILT_IN.iter().find(|(n, _)| *n == name) {
            return SizeCdf::parse(text, &format!("{n} (built-in)"));
        }
        let (path, text) = files.read(name);
        let text = text.map_err(|e| {
            Error::invalid(KEY, format!("cannot read {}: {e} (built-in distributions: {})", path.display(), built_in_names()))
        })?;
        SizeCdf::parse(&text, &path.display().to_string())
    }

    /// Parses CDF text; `file` names it in error messages (`file:line: ...`).
    pub fn parse(text: &str, file: &str) -> Result<SizeCdf> {
        let mut sizes = Vec::new();
        let mut cdf = Vec::new();
        let mut last_line = 0;
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let content = raw.split('#').next().unwrap_or_default().trim();
            if content.is_empty() {
                continue;
            }
            let words: Vec<&str> = content.split_whitespace().collect();
            let [size, value] = words[..] else {
                return Err(bad(file, n, format!("expected two numbers `size cdf`, found `{}`", clip(content))));
            };
            let number = |what: &str, s: &str| -> Result<f64> {
                match s.parse::<f64>() {
                    Ok(v) if v.is_finite() => Ok(v),
                    _ => Err(bad(file, n, format!("{what} `{}` is not a valid number", clip(s)))),
                }
            };
            let (size, value) = (number("size", size)?, number("cdf value", value)?);
            if size < 0.0 {
                return Err(bad(file, n, format!("size {size} is negative: sizes are bytes, at least 0")));
            }
            if value < 0.0 {
                return Err(bad(file, n, format!("cdf value {value} is negative")));
            }
            if let (Some(&prev_size), Some(&prev_value)) = (sizes.last(), cdf.last()) {
                if size < prev_size {
                    return Err(bad(file, n, format!("size {size} is below the previous line's {prev_size}: sizes must not decrease")));
                }
                if value < prev_value {
                    return Err(bad(file, n, format!("cdf value {value} is below the previous line's {prev_value}: the CDF must not decrease")));
                }
            }
            sizes.push(size);
            cdf.push(value);
            last_line = n;
        }
        if sizes.is_empty() {
            return Err(bad(file, 1, "empty file: expected `size cdf` lines"));
        }
        if sizes.len() < 2 {
            return Err(bad(file, last_line, "only one point: a CDF needs at least 2 `size cdf` lines"));
        }
        let last = *cdf.last().unwrap_or(&0.0);
        let scale = if last == 1.0 {
            1.0
        } else if last == 100.0 {
            100.0
        } else {
            return Err(bad(file, last_line, format!("the last cdf value is {last}: it must be 1 (fractions) or 100 (percents)")));
        };
        for v in &mut cdf {
            *v /= scale;
        }
        if sizes.last() == Some(&0.0) {
            return Err(bad(file, last_line, "every size is 0: flows must carry at least one byte"));
        }
        Ok(SizeCdf { sizes, cdf })
    }

    /// Exact mean (bytes) of the piecewise-linear distribution: the point mass at the first
    /// size plus each segment's probability times its midpoint.
    pub fn mean(&self) -> f64 {
        let point_mass = self.cdf[0] * self.sizes[0];
        let segments: f64 = (1..self.sizes.len()).map(|i| (self.cdf[i] - self.cdf[i - 1]) * (self.sizes[i] + self.sizes[i - 1]) / 2.0).sum();
        point_mass + segments
    }

    /// The size (bytes, unrounded) at cumulative probability `u` ∈ [0, 1).
    pub fn quantile(&self, u: f64) -> f64 {
        // First breakpoint whose CDF exceeds u: u lies in the segment ending there. Flat
        // segments (zero probability) are skipped, so a breakpoint's u maps to its own size.
        let j = self.cdf.partition_point(|&c| c <= u);
        if j == 0 {
            return self.sizes[0];
        }
        if j == self.cdf.len() {
            return self.sizes[j - 1];
        }
        let (c0, c1, s0, s1) = (self.cdf[j - 1], self.cdf[j], self.sizes[j - 1], self.sizes[j]);
        s0 + (u - c0) / (c1 - c0) * (s1 - s0)
    }

    /// One flow size (bytes, at least 1) from one uniform draw.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        (self.quantile(rng.unit()).round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn error_of(text: &str) -> String {
        SizeCdf::parse(text, "f.cdf").unwrap_err().to_string()
    }

    #[test]
    fn uniform_two_point_cdf_has_the_midpoint_mean_and_linear_quantiles() {
        let c = SizeCdf::parse("# uniform\n1000 0\n\n3000 1 # end\n", "u.cdf").unwrap();
        assert_eq!(c.mean(), 2000.0);
        assert_eq!(c.quantile(0.0), 1000.0);
        assert_eq!(c.quantile(0.25), 1500.0);
        assert_eq!(c.quantile(0.5), 2000.0);
        let mut rng = Rng::stream(1, "t", 0);
        let n = 200_000;
        let mean = (0..n).map(|_| c.sample(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!((mean - 2000.0).abs() < 10.0, "{mean}");
    }

    #[test]
    fn percents_point_masses_and_exact_breakpoints() {
        // 20 % at exactly 100 B, then uniform 100..500 up to 60 %, a step at 500 B to 80 %, and
        // uniform 500..1500 to the end.
        let c = SizeCdf::parse("100 20\n500 60\n500 80\n1500 100\n", "p.cdf").unwrap();
        assert_eq!(c.quantile(0.1), 100.0);
        assert_eq!(c.quantile(0.2), 100.0);
        assert_eq!(c.quantile(0.6), 500.0);
        assert_eq!(c.quantile(0.7), 500.0);
        assert_eq!(c.quantile(0.8), 500.0);
        assert_eq!(c.quantile(0.9), 1000.0);
        let mean = 0.2 * 100.0 + 0.4 * 300.0 + 0.2 * 500.0 + 0.2 * 1000.0;
        assert!((c.mean() - mean).abs() < 1e-9, "{} vs {mean}", c.mean());
        // A size below one byte rounds up to 1.
        let tiny = SizeCdf::parse("0 0\n0.2 1\n", "t.cdf").unwrap();
        let mut rng = Rng::stream(2, "t", 0);
        assert!((0..100).all(|_| tiny.sample(&mut rng) == 1));
    }

    //= seqbalance §5.2 (Workloads, Fig. 9); type=test
    //# AliStorage2019: DERIVED mean ≈ 40.9 KB. WebSearch: DERIVED mean ≈ 1.71 MB.
    #[test]
    fn shipped_distributions_have_the_spec_means() {
        let ali = SizeCdf::resolve("alistorage2019", &InputFiles::new(Path::new("/nonexistent"))).unwrap();
        assert!((ali.mean() - 40_869.8).abs() < 0.01, "{}", ali.mean());
        assert_eq!(ali.quantile(0.2293), 4000.0);
        let web = SizeCdf::resolve("websearch", &InputFiles::new(Path::new("/nonexistent"))).unwrap();
        assert!((web.mean() - 1_711_250.0).abs() < 0.01, "{}", web.mean());
        assert_eq!(web.quantile(0.97), 10_000_000.0);
    }

    #[test]
    fn every_malformed_file_is_rejected_naming_its_line() {
        let cases: &[(&str, &str)] = &[
            ("", "f.cdf:1: empty file"),
            ("# only a comment\n\n", "f.cdf:1: empty file"),
            ("100 1\n", "f.cdf:1: only one point"),
            ("0 0\n200 0.5\n100 1\n", "f.cdf:3: size 100 is below"),
            ("0 0\n100 0.6\n200 0.5\n300 1\n", "f.cdf:3: cdf value 0.5 is below"),
            ("0 0\n100 0.5\n200 0.9\n", "f.cdf:3: the last cdf value is 0.9"),
            ("0 0\n100 50\n200 99\n", "f.cdf:3: the last cdf value is 99"),
            ("-5 0\n100 1\n", "f.cdf:1: size -5 is negative"),
            ("0 0\n# c\n1e3x 1\n", "f.cdf:3: size `1e3x` is not a valid number"),
            ("0 0\n100 NaN\n", "f.cdf:2: cdf value `NaN` is not a valid number"),
            ("0 0\n100 0.5 7\n", "f.cdf:2: expected two numbers"),
            ("0 -0.1\n100 1\n", "f.cdf:1: cdf value -0.1 is negative"),
            ("0 0\n0 1\n", "f.cdf:2: every size is 0"),
        ];
        for (text, wanted) in cases {
            let e = error_of(text);
            assert!(e.contains("workload.cdf") && e.contains(wanted), "{text:?}: {e}");
        }
        let e = SizeCdf::resolve("no_such.cdf", &InputFiles::new(Path::new("/tmp"))).unwrap_err().to_string();
        assert!(e.contains("cannot read /tmp/no_such.cdf") && e.contains("\"websearch\""), "{e}");
        let e = SizeCdf::resolve("", &InputFiles::new(Path::new("."))).unwrap_err().to_string();
        assert!(e.contains("missing") && e.contains("\"alistorage2019\""), "{e}");
    }
}

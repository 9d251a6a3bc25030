//! Latency histograms: one per worker per interval, recorded without locks and merged
//! by the sampler. Nanosecond resolution so that even the null target's ~tens of ns
//! per op is resolved; reported in µs.

use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// A stored histogram that does not read back.
#[derive(Debug, thiserror::Error)]
#[error("an HDR histogram (V2 compressed, base64) that does not decode: {0}")]
pub struct HistogramDecodeError(String);

/// Highest latency recorded exactly: one hour, in ns; longer ops saturate to it.
const MAX_NS: u64 = 3_600_000_000_000;

/// An HDR histogram of op latencies in ns (3 significant digits).
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        LatencyHistogram {
            h: Histogram::new_with_bounds(1, MAX_NS, 3).expect("static histogram bounds"),
        }
    }

    /// Records one op's latency.
    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        self.h.saturating_record(ns.max(1));
    }

    /// Adds another histogram's counts.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Same bounds on both sides, so add cannot fail.
        let _ = self.h.add(&other.h);
    }

    /// Ops recorded.
    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// The `q`-quantile (0..=1) in µs, or `None` if empty.
    pub fn quantile_us(&self, q: f64) -> Option<f64> {
        (!self.h.is_empty()).then(|| self.h.value_at_quantile(q) as f64 / 1000.0)
    }

    /// Largest latency in µs, or `None` if empty.
    pub fn max_us(&self) -> Option<f64> {
        (!self.h.is_empty()).then(|| self.h.max() as f64 / 1000.0)
    }

    /// The figures stored for one kind of op (or the open-loop service time): count,
    /// percentiles and the insert benchmark's response-time buckets.
    pub fn op_latency(&self) -> crate::OpLatency {
        crate::OpLatency {
            ops: self.count(),
            p50_us: self.quantile_us(0.5),
            p90_us: self.quantile_us(0.9),
            p99_us: self.quantile_us(0.99),
            p999_us: self.quantile_us(0.999),
            max_us: self.max_us(),
            buckets: if self.count() > 0 {
                self.buckets_us(&crate::IB_BUCKETS_US)
            } else {
                Vec::new()
            },
        }
    }

    /// Ops per bucket: those ≤ `bounds_us[0]`, then each next bound, then the rest
    /// (the insert benchmark's response-time buckets). Each recorded value counts
    /// once, by its histogram slot's lower edge: a value within the histogram's 0.1%
    /// resolution of a bound counts at or below it.
    pub fn buckets_us(&self, bounds_us: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; bounds_us.len() + 1];
        for v in self.h.iter_recorded() {
            let us = self.h.lowest_equivalent(v.value_iterated_to()) as f64 / 1000.0;
            let i = bounds_us
                .iter()
                .position(|b| us <= *b as f64)
                .unwrap_or(bounds_us.len());
            out[i] += v.count_at_value();
        }
        out
    }

    /// The histogram in HdrHistogram's V2 compressed encoding (DEFLATE), as base64:
    /// what every HdrHistogram implementation reads, and what a multi-client step
    /// stores per client so its percentiles come from the merged counts.
    pub fn to_v2_base64(&self) -> String {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.h, &mut bytes)
            .expect("serialising to memory does not fail");
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// Reads back [`Self::to_v2_base64`] (or any V2 histogram of ns values up to an
    /// hour), ready to merge with this build's histograms.
    pub fn from_v2_base64(text: &str) -> Result<Self, HistogramDecodeError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| HistogramDecodeError(e.to_string()))?;
        let other: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| HistogramDecodeError(format!("{e:?}")))?;
        let mut h = LatencyHistogram::new();
        h.h.add(&other)
            .map_err(|e| HistogramDecodeError(format!("{e:?}")))?;
        Ok(h)
    }

    /// Empties it for reuse without reallocating.
    pub fn reset(&mut self) {
        self.h.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_of_parts_equals_the_whole() {
        let (mut a, mut b, mut whole) = (
            LatencyHistogram::new(),
            LatencyHistogram::new(),
            LatencyHistogram::new(),
        );
        for i in 1..=10_000u64 {
            let v = i * 1000; // 1 µs .. 10 ms
            if i % 3 == 0 {
                a.record_ns(v)
            } else {
                b.record_ns(v)
            }
            whole.record_ns(v);
        }
        a.merge(&b);
        assert_eq!(a.count(), 10_000);
        for q in [0.5, 0.99, 0.999, 0.9999] {
            assert_eq!(a.quantile_us(q), whole.quantile_us(q));
        }
        let p50 = a.quantile_us(0.5).unwrap();
        assert!((p50 - 5000.0).abs() < 5.0, "p50 {p50}");
        assert!((a.max_us().unwrap() - 10_000.0).abs() < 10.0);
    }

    /// The multi-client rule: percentiles of histograms merged after a round trip
    /// through the stored encoding equal those of one histogram fed every sample, and
    /// differ from the average of the clients' percentiles.
    #[test]
    fn stored_histograms_merge_to_the_histogram_of_all_samples() {
        let mut whole = LatencyHistogram::new();
        let mut clients: Vec<LatencyHistogram> = (0..3).map(|_| LatencyHistogram::new()).collect();
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for i in 0..60_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Client 2 is slow: ten times the latency of the others.
            let c = (i % 3) as usize;
            let ns = (x % 2_000_000 + 1_000) * if c == 2 { 10 } else { 1 };
            clients[c].record_ns(ns);
            whole.record_ns(ns);
        }
        let stored: Vec<String> = clients.iter().map(LatencyHistogram::to_v2_base64).collect();
        let mut merged = LatencyHistogram::new();
        for s in &stored {
            merged.merge(&LatencyHistogram::from_v2_base64(s).unwrap());
        }
        assert_eq!(merged.count(), whole.count());
        for q in [0.0, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
            assert_eq!(merged.quantile_us(q), whole.quantile_us(q), "q {q}");
        }
        assert_eq!(merged.max_us(), whole.max_us());
        let averaged: f64 = clients
            .iter()
            .map(|c| c.quantile_us(0.99).unwrap())
            .sum::<f64>()
            / 3.0;
        assert!((averaged - whole.quantile_us(0.99).unwrap()).abs() > 100.0);
        assert!(LatencyHistogram::from_v2_base64("not base64!").is_err());
        assert!(LatencyHistogram::from_v2_base64("AAAA").is_err());
    }

    #[test]
    fn buckets_count_each_op_once() {
        let mut h = LatencyHistogram::new();
        for us in [100u64, 256, 900, 5_000, 2_000_000, 20_000_000] {
            h.record_ns(us * 1000);
        }
        let b = h.buckets_us(&[256, 1_000, 4_000, 16_000]);
        assert_eq!(b.iter().sum::<u64>(), 6);
        assert_eq!(b, vec![2, 1, 0, 1, 2]);
    }

    #[test]
    fn empty_has_no_percentiles_and_huge_values_saturate() {
        let mut h = LatencyHistogram::new();
        assert_eq!(h.quantile_us(0.5), None);
        h.record_ns(u64::MAX);
        h.record_ns(0);
        assert_eq!(h.count(), 2);
        h.reset();
        assert_eq!(h.count(), 0);
    }
}

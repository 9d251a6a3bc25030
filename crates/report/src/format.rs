//! Number formatting shared by reporters: a figure that is missing prints as `n/a`,
//! never as 0.

/// `v` with `digits` significant digits (integers above that keep all their digits),
/// or `n/a`.
pub fn sig(v: Option<f64>, digits: usize) -> String {
    match v {
        None => "n/a".into(),
        Some(x) if !x.is_finite() => "n/a".into(),
        Some(0.0) => "0".into(),
        Some(x) => {
            let mag = x.abs().log10().floor() as i32;
            let decimals = (digits as i32 - 1 - mag).max(0) as usize;
            format!("{x:.decimals$}")
        }
    }
}

/// `v` with a fixed number of decimals, or `n/a`.
pub fn fixed(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.decimals$}"),
        _ => "n/a".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_is_never_zero() {
        assert_eq!(sig(None, 3), "n/a");
        assert_eq!(sig(Some(f64::NAN), 3), "n/a");
        assert_eq!(fixed(None, 1), "n/a");
        assert_eq!(sig(Some(0.0), 3), "0");
    }

    #[test]
    fn significant_digits() {
        assert_eq!(sig(Some(123456.7), 3), "123457");
        assert_eq!(sig(Some(12.345), 3), "12.3");
        assert_eq!(sig(Some(0.012345), 3), "0.0123");
        assert_eq!(fixed(Some(1.25), 1), "1.2");
    }
}

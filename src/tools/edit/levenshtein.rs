//! Edit distance and similarity of two lines.
//!
//! Unlike the reference, which counts bytes, distances count characters: `é` against `e`
//! is one substitution, not two edits, so non-ASCII text is not judged more different
//! than ASCII text.

/// The Levenshtein distance of `a` and `b` in characters (unit costs, two-row dynamic
/// programming).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.is_empty() {
        return b.len();
    }
    if b.is_empty() {
        return a.len();
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// `1 - distance / longer length`, in `[0, 1]`; two empty strings are identical (1.0).
pub fn similarity(a: &str, b: &str) -> f64 {
    let longest = a.chars().count().max(b.chars().count());
    if longest == 0 {
        return 1.0;
    }
    1.0 - distance(a, b) as f64 / longest as f64
}

/// Whether `similarity(a, b) >= threshold`, skipping the quadratic work when the lengths
/// alone rule it out.
pub fn similar_at_least(a: &str, b: &str, threshold: f64) -> bool {
    let (la, lb) = (a.chars().count(), b.chars().count());
    let longest = la.max(lb);
    if longest == 0 {
        return true;
    }
    let least_distance = la.abs_diff(lb);
    if 1.0 - (least_distance as f64 / longest as f64) < threshold {
        return false;
    }
    similarity(a, b) >= threshold
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_of_the_reference() {
        assert_eq!(distance("", ""), 0);
        assert_eq!(distance("abc", ""), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("abc", "abc"), 0);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("sunday", "saturday"), 3);
        assert_eq!(distance("abc", "axc"), 1);
        assert_eq!(distance("café", "cafe"), 1, "characters, not bytes");
    }

    #[test]
    fn similarities_of_the_reference() {
        assert_eq!(similarity("", ""), 1.0);
        assert_eq!(similarity("abc", "abc"), 1.0);
        let s = similarity("abc", "axc");
        assert!((0.6..=0.7).contains(&s), "{s}");
        let s = similarity("hello", "world");
        assert!((0.0..=0.3).contains(&s), "{s}");
        assert!(similar_at_least("abcd", "abce", 0.75));
        assert!(!similar_at_least("a", "abcdefgh", 0.5));
    }
}

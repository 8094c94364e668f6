//! Just enough DER to take a certificate apart and put it back together (single-byte
//! tags, definite lengths up to four length octets).

use crate::TlsError;

/// One tag-length-value element.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tlv<'a> {
    pub tag: u8,
    /// The contents octets.
    pub content: &'a [u8],
    /// The whole element, header included.
    pub raw: &'a [u8],
}

/// Reads one element from the front of `input`; returns it and what follows.
pub(crate) fn read_tlv(input: &[u8]) -> Result<(Tlv<'_>, &[u8]), TlsError> {
    let bad = TlsError::Malformed("DER element");
    let (&tag, rest) = input.split_first().ok_or(TlsError::Malformed("DER: empty"))?;
    if tag & 0x1f == 0x1f {
        return Err(TlsError::Malformed("DER: multi-byte tag"));
    }
    let (&first, rest) = rest.split_first().ok_or(TlsError::Malformed("DER: no length"))?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return Err(bad);
        }
        let len = rest[..n].iter().fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (len, &rest[n..])
    };
    if rest.len() < len {
        return Err(TlsError::Malformed("DER: element runs past its container"));
    }
    let header = input.len() - rest.len();
    let tlv = Tlv { tag, content: &rest[..len], raw: &input[..header + len] };
    Ok((tlv, &rest[len..]))
}

/// Reads one element and checks its tag.
pub(crate) fn expect_tlv(input: &[u8], tag: u8) -> Result<(Tlv<'_>, &[u8]), TlsError> {
    let (tlv, rest) = read_tlv(input)?;
    if tlv.tag != tag {
        return Err(TlsError::Malformed("DER: unexpected tag"));
    }
    Ok((tlv, rest))
}

/// Appends an element with the shortest length encoding.
pub(crate) fn write_tlv(tag: u8, content: &[u8], out: &mut Vec<u8>) {
    out.push(tag);
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = (len as u32).to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        out.push(0x80 | (4 - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
}

/// An element as a fresh vector.
pub(crate) fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len() + 6);
    write_tlv(tag, content, &mut out);
    out
}

/// The subjectPublicKey bits (without the unused-bits octet) of a SubjectPublicKeyInfo.
pub(crate) fn spki_key_bits(spki: &[u8]) -> Result<&[u8], TlsError> {
    let (seq, _) = expect_tlv(spki, 0x30)?;
    let (_alg, rest) = expect_tlv(seq.content, 0x30)?;
    let (bits, _) = expect_tlv(rest, 0x03)?;
    match bits.content.split_first() {
        Some((0, key)) => Ok(key),
        _ => Err(TlsError::Malformed("DER: subjectPublicKey")),
    }
}

/// The (modulus, exponent) of a PKCS#1 RSAPublicKey, without leading zero octets.
pub(crate) fn rsa_public_parts(rsa_public_key: &[u8]) -> Result<(&[u8], &[u8]), TlsError> {
    let (seq, _) = expect_tlv(rsa_public_key, 0x30)?;
    let (n, rest) = expect_tlv(seq.content, 0x02)?;
    let (e, _) = expect_tlv(rest, 0x02)?;
    let n = strip_zeros(n.content).ok_or(TlsError::Malformed("RSA modulus"))?;
    let e = strip_zeros(e.content).ok_or(TlsError::Malformed("RSA exponent"))?;
    Ok((n, e))
}

/// `v` without its leading zero octets; `None` when nothing else is left.
fn strip_zeros(v: &[u8]) -> Option<&[u8]> {
    let start = v.iter().take_while(|&&b| b == 0).count();
    (start < v.len()).then(|| &v[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_round_trip() {
        for len in [0usize, 1, 127, 128, 255, 256, 65535, 65536, 70000] {
            let content = vec![7u8; len];
            let encoded = tlv(0x04, &content);
            let (t, rest) = read_tlv(&encoded).unwrap();
            assert!(rest.is_empty());
            assert_eq!(t.tag, 0x04);
            assert_eq!(t.content.len(), len);
            assert_eq!(t.raw, &encoded[..]);
        }
    }

    #[test]
    fn short_and_odd_input_is_an_error() {
        for bad in [&[][..], &[0x30], &[0x30, 0x81], &[0x30, 0x85, 1, 1, 1, 1, 1], &[0x30, 0x05, 1], &[0x1f, 0]] {
            assert!(read_tlv(bad).is_err(), "{bad:?}");
        }
    }
}

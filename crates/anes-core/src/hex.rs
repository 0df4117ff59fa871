//! Lowercase hexadecimal: the workspace's one encoder (state hashes, ROM identities in errors, the
//! worker protocol's byte fields, `anes run --peek`).

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Writes the lowercase hex of `bytes` into `out`, two digits per byte, high nibble first, without
/// allocating.
///
/// # Panics
///
/// If `out` is not exactly twice as long as `bytes` (a caller's bug, not input).
pub fn encode_into(bytes: &[u8], out: &mut [u8]) {
    assert_eq!(out.len(), 2 * bytes.len(), "hex output must hold two digits per byte");
    for (byte, pair) in bytes.iter().zip(out.chunks_exact_mut(2)) {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 15)];
    }
}

/// Lowercase hex of `bytes`, two digits per byte.
pub fn to_hex(bytes: &[u8]) -> String {
    let mut out = vec![0u8; 2 * bytes.len()];
    encode_into(bytes, &mut out);
    String::from_utf8(out).expect("hex digits are ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_each_nibble_lowercase_high_first() {
        assert_eq!(to_hex(&[]), "");
        assert_eq!(to_hex(&[0x00, 0x01, 0x0f, 0x10, 0xa5, 0x5a, 0xfe, 0xff]), "00010f10a55afeff");
        let every_byte: Vec<u8> = (0..=255).collect();
        // std's formatter is the independent oracle.
        let expected: String = every_byte.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(to_hex(&every_byte), expected);
    }

    #[test]
    fn a_state_hash_displays_as_its_bytes_in_hex() {
        let mut bytes = [0u8; 32];
        bytes[0] = 0xab;
        bytes[31] = 0x0c;
        let hash = crate::state::StateHash(bytes);
        let expected = format!("ab{}0c", "00".repeat(30));
        assert_eq!(hash.to_string(), expected);
        assert_eq!(&hash.to_hex()[..], expected.as_bytes());
    }

    #[test]
    #[should_panic(expected = "two digits per byte")]
    fn a_wrong_sized_output_is_a_bug() {
        encode_into(&[1, 2], &mut [0u8; 3]);
    }
}

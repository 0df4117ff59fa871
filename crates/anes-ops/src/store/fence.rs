//! The fencing rule, in one place: a write is accepted only when the writer's epoch is the store's
//! current epoch. Older: the writer was fenced by a takeover. Newer: the store never issued it (it lost
//! its epoch), so it cannot vouch for the writer either. Both backends call [`check`]; the Redis
//! backend runs the same comparison inside its Lua script ([`LUA_RULE`]), server-side.

use super::StoreError;

/// The rule as the Redis script states it (kept next to [`check`] so the two are read together). An
/// epoch key that does not hold a number is the store's record of the pipeline damaged: refused too.
pub const LUA_RULE: &str = r#"
local raw = redis.call('GET', KEYS[1])
local current = tonumber(raw or '0')
if current == nil then return {'damaged', tostring(raw)} end
local writer = tonumber(ARGV[1])
if writer < current then return {'fenced', tostring(current)} end
if writer > current then return {'ahead', tostring(current)} end
"#;

/// Accepts a write of `writer` epoch when the store's is `current`.
///
/// ```
/// use anes_ops::store::fence::check;
/// assert!(check("p1", 4, 4).is_ok());
/// let refused = check("p1", 3, 4).unwrap_err();
/// assert_eq!(refused.to_string(), "pipeline p1: write refused: writer epoch 3 is older than the store's epoch 4 (another writer took over; this one is fenced)");
/// assert!(check("p1", 5, 4).unwrap_err().is_fenced());
/// ```
pub fn check(pipeline: &str, writer: u64, current: u64) -> Result<(), StoreError> {
    if writer < current {
        Err(StoreError::Fenced { pipeline: pipeline.to_string(), writer, current })
    } else if writer > current {
        Err(StoreError::EpochAhead { pipeline: pipeline.to_string(), writer, current })
    } else {
        Ok(())
    }
}

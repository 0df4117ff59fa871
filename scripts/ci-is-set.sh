# Sourced by .ci/run: `ci_is_set` succeeds when CI is set to anything but empty, 0 or false (in any
# case, surrounding whitespace ignored), the rule of anes_fs::ci_is_set, which tests that the two agree.
ci_is_set() {
    local value="${CI:-}"
    value="${value#"${value%%[![:space:]]*}"}"
    value="${value%"${value##*[![:space:]]}"}"
    value="${value,,}"
    [[ -n "$value" && "$value" != "0" && "$value" != "false" ]]
}

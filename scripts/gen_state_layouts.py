import re,glob
src = {}
for f in glob.glob('/work/main/crates/anes-core/src/**/*.rs', recursive=True):
    s = open(f).read()
    for m in re.finditer(r'pub struct (\w+) \{(.*?)\n\}', s, re.S):
        fields = re.findall(r'^\s*pub (\w+): ([^,]+),', m.group(2), re.M)
        src[m.group(1)] = fields
def const_name(t): return re.sub(r'(?<!^)(?=[A-Z])', '_', t).upper()
def emit(struct, structs_with_layout):
    out=[f"const {const_name(struct)}: &[FieldLayout] = &["]
    for name, ty in src[struct]:
        ty=ty.strip()
        m = re.match(r'\[(\w+); *(\d+)\]', ty)
        elem = m.group(1) if m else ty
        inner = f"Some({const_name(elem)})" if elem in structs_with_layout else "None"
        out.append(f"    FieldLayout {{ offset: offset_of!({struct}, {name}), size: size_of::<{ty}>(), name: \"{name}\", type_name: type_name::<{ty}>, elem_size: size_of::<{elem}>(), inner: {inner} }},")
    out.append("];")
    return "\n".join(out)
import sys
structs = sys.argv[1:]
print("\n\n".join(emit(s, set(structs)) for s in structs))

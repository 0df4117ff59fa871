//! Field layouts of the plain-old-data state structs, defined together with the structs.
//!
//! Every struct that is machine state is written inside [`state_struct!`], which emits the struct with
//! its fixed representation (`#[repr(C)]`, `bytemuck::Pod`, so no padding and no uninitialised byte)
//! and, from the same field list, its table of [`FieldLayout`]s: a field cannot be added without
//! appearing in the table. A compile-time check then proves the table covers the struct exactly, byte
//! for byte, in order. The tables name the bytes of state in diffs (`cpu.p`,
//! `apu.pulse[1].timer_period`) and let the snapshot loader find every `reserved` byte.
//!
//! A leaf module: it depends on nothing else in the crate, so every chip can define its state here
//! without depending on `state/`, which in turn gathers every chip's state.

use core::any::type_name;
use core::mem::size_of;

/// A named field inside a struct-shaped section.
#[derive(Debug, Clone, Copy)]
pub struct FieldLayout {
    /// Offset of the first byte within the enclosing struct.
    pub offset: usize,
    /// Size in bytes (multi-byte scalars are little-endian).
    pub size: usize,
    /// Field name as written in reports.
    pub name: &'static str,
    type_name: fn() -> &'static str,
    /// Size of one element: equal to `size` for scalars and structs, smaller for arrays.
    pub elem_size: usize,
    /// The element's own layout when it is a struct.
    pub inner: Option<&'static [FieldLayout]>,
}

impl FieldLayout {
    /// The layout of a field of type `T` at `offset`, named `name`.
    pub const fn of<T: StateField>(offset: usize, name: &'static str) -> FieldLayout {
        FieldLayout {
            offset,
            size: size_of::<T>(),
            name,
            type_name: type_name::<T>,
            elem_size: T::ELEM_SIZE,
            inner: T::INNER,
        }
    }

    /// The field's Rust type, e.g. `u8`, `[u8; 3]` (tests assert no floating point is ever state).
    pub fn type_name(&self) -> &'static str {
        (self.type_name)()
    }
}

/// A type that may be a field of a state struct: an unsigned integer, a state struct, or an array of
/// either. Floating point is deliberately not one.
pub trait StateField: bytemuck::Pod {
    /// Size of one element (the type's size, or an array's element size).
    const ELEM_SIZE: usize;
    /// The element's layout when it is a state struct.
    const INNER: Option<&'static [FieldLayout]>;
}

macro_rules! scalar_state_fields {
    ($($scalar:ty),*) => {
        $(impl StateField for $scalar {
            const ELEM_SIZE: usize = size_of::<$scalar>();
            const INNER: Option<&'static [FieldLayout]> = None;
        })*
    };
}
scalar_state_fields!(u8, u16, u32, u64);

impl<T: StateField, const N: usize> StateField for [T; N]
where
    [T; N]: bytemuck::Pod,
{
    const ELEM_SIZE: usize = size_of::<T>();
    const INNER: Option<&'static [FieldLayout]> = T::INNER;
}

/// A state struct: its fields, in declaration (and memory) order.
pub trait StateLayout: StateField {
    /// One entry per field.
    const FIELDS: &'static [FieldLayout];
}

/// Panics (at compile time, where it is called in a `const`) unless `fields` tile `size` bytes exactly:
/// each field starts where the previous one ended, the first at 0, the last ends at `size`, and arrays
/// hold whole elements.
pub const fn assert_covers(fields: &[FieldLayout], size: usize) {
    let mut offset = 0;
    let mut i = 0;
    while i < fields.len() {
        let field = &fields[i];
        assert!(field.offset == offset, "a state struct's field table has a gap or an overlap");
        assert!(field.elem_size != 0 && field.size % field.elem_size == 0, "an array of partial elements");
        offset += field.size;
        i += 1;
    }
    assert!(offset == size, "a state struct's field table does not cover the struct");
}

/// Defines a plain-old-data state struct and its field table in one go.
///
/// Write the struct as usual (doc comments on it and on each field, no attributes besides docs): the
/// macro adds `#[repr(C)]` and the derives every state struct has (`Debug, Clone, Copy, PartialEq, Eq,
/// Default, Pod, Zeroable`), implements [`StateLayout`] with one [`FieldLayout`] per field, and checks
/// at compile time that the table covers the struct exactly.
macro_rules! state_struct {
    (
        $(#[doc = $doc:expr])*
        $vis:vis struct $name:ident {
            $(
                $(#[doc = $field_doc:expr])*
                $field_vis:vis $field:ident : $ty:ty
            ),* $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[repr(C)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, bytemuck::Pod, bytemuck::Zeroable)]
        $vis struct $name {
            $(
                $(#[doc = $field_doc])*
                $field_vis $field: $ty,
            )*
        }

        impl $crate::layout::StateField for $name {
            const ELEM_SIZE: usize = core::mem::size_of::<$name>();
            const INNER: Option<&'static [$crate::layout::FieldLayout]> =
                Some(<$name as $crate::layout::StateLayout>::FIELDS);
        }

        impl $crate::layout::StateLayout for $name {
            const FIELDS: &'static [$crate::layout::FieldLayout] = &[
                $($crate::layout::FieldLayout::of::<$ty>(core::mem::offset_of!($name, $field), stringify!($field)),)*
            ];
        }

        const _: () = $crate::layout::assert_covers(
            <$name as $crate::layout::StateLayout>::FIELDS,
            core::mem::size_of::<$name>(),
        );
    };
}
pub(crate) use state_struct;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_check_refuses_gaps_overlaps_and_short_tables() {
        let byte = |offset, name| FieldLayout::of::<u8>(offset, name);
        let ok = [byte(0, "a"), FieldLayout::of::<[u16; 2]>(1, "b"), byte(5, "c")];
        assert_covers(&ok, 6);
        for (fields, size) in [
            (vec![byte(0, "a"), byte(2, "b")], 3),
            (vec![byte(0, "a"), byte(0, "b")], 2),
            (vec![byte(0, "a")], 2),
        ] {
            let result = std::panic::catch_unwind(|| assert_covers(&fields, size));
            assert!(result.is_err(), "{fields:?} accepted for {size} bytes");
        }
    }
}

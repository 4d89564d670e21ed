//! The jaxpr as the core sees it: typed variables, equations of primitives with their params, outputs.
//! One closed primitive enum; params live inside the variant that needs them.

use super::dtype::{DType, Scalar};

/// A variable's id, unique within one program (sub-programs of control flow share the id space).
pub type VarId = u32;

/// Abstract value: dtype and shape (row-major).
#[derive(Debug, Clone, Eq, Hash)]
pub struct Aval {
    pub dtype: DType,
    pub shape: Vec<usize>,
}

/// The derived comparison: the same result (`Hash` agrees), but a scalar's empty shape is never handed to
/// `memcmp`. The executor compares every input's aval per call, mostly scalars in loop-heavy programs, and
/// glibc's AVX-512 `memcmp` takes a ~120 ns microcode assist on an empty `Vec`'s dangling pointer even
/// for a length of zero.
impl PartialEq for Aval {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.dtype == other.dtype
            && self.shape.len() == other.shape.len()
            && (self.shape.is_empty() || self.shape[..] == other.shape[..])
    }
}

impl Aval {
    pub fn new(dtype: DType, shape: Vec<usize>) -> Self {
        Aval { dtype, shape }
    }
    pub fn scalar(dtype: DType) -> Self {
        Aval { dtype, shape: vec![] }
    }
    /// Number of elements; `None` on overflow.
    pub fn numel(&self) -> Option<usize> {
        self.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
    }
}

/// An equation operand: a variable or a scalar literal of a dtype.
#[derive(Debug, Clone, PartialEq)]
pub enum Atom {
    Var(VarId),
    Lit(Scalar, DType),
}

/// Declares an op enum together with JAX's name for each op: the one table that both the parser
/// (`from_name`) and the printer (`name`, through `Prim::name`) read.
macro_rules! named_ops {
    ($(#[$m:meta])* pub enum $E:ident { $($(#[$vm:meta])* $V:ident = $n:literal,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $E {
            $($(#[$vm])* $V,)*
        }
        impl $E {
            /// Every op, in declaration order.
            pub const ALL: &'static [$E] = &[$($E::$V,)*];
            /// JAX's name of the op, as in printed jaxprs and on the wire.
            pub fn name(self) -> &'static str {
                match self {
                    $($E::$V => $n,)*
                }
            }
            /// The op JAX calls `name`.
            pub fn from_name(name: &str) -> Option<$E> {
                match name {
                    $($n => Some($E::$V),)*
                    _ => None,
                }
            }
        }
    };
}

named_ops! {
    /// Elementwise unary primitives.
    pub enum UnaryOp {
        Neg = "neg",
        Abs = "abs",
        Sign = "sign",
        Floor = "floor",
        Ceil = "ceil",
        /// Half away from zero (JAX `rounding_method=0`); `RoundEven` is `rounding_method=1` (printed `round`).
        Round = "round",
        /// Half to even; parsed from `round[rounding_method=1]`.
        RoundEven = "round_even",
        Exp = "exp",
        Exp2 = "exp2",
        Log = "log",
        Log1p = "log1p",
        Expm1 = "expm1",
        Sqrt = "sqrt",
        Rsqrt = "rsqrt",
        Cbrt = "cbrt",
        Sin = "sin",
        Cos = "cos",
        Tan = "tan",
        Tanh = "tanh",
        Logistic = "logistic",
        Erf = "erf",
        /// 1 - erf(x), accurate where erf(x) is near 1.
        Erfc = "erfc",
        Asin = "asin",
        Acos = "acos",
        Atan = "atan",
        Sinh = "sinh",
        Cosh = "cosh",
        Asinh = "asinh",
        Acosh = "acosh",
        Atanh = "atanh",
        ErfInv = "erf_inv",
        /// The inverse of the standard normal CDF (JAX has no such primitive: `jax.scipy.special.ndtri`, f32).
        Ndtri = "ndtri",
        Lgamma = "lgamma",
        Digamma = "digamma",
        /// e^-|x| I0(x), I0 the modified Bessel function of the first kind.
        BesselI0e = "bessel_i0e",
        /// e^-|x| I1(x).
        BesselI1e = "bessel_i1e",
        Not = "not",
        IsFinite = "is_finite",
        Square = "square",
        PopulationCount = "population_count",
        /// Count of leading zero bits.
        Clz = "clz",
    }
}

named_ops! {
    /// Elementwise binary primitives.
    pub enum BinaryOp {
        Add = "add",
        Sub = "sub",
        Mul = "mul",
        Div = "div",
        Rem = "rem",
        Max = "max",
        Min = "min",
        Pow = "pow",
        /// float32 pow as the C library's `powf` (XLA:CPU's call): the samplers that need JAX's bits bind it
        /// (gamma's boost, weibull_min, generalized_normal); it prints as `pow`. f64: as `pow`.
        PowLibm = "pow_libm",
        Atan2 = "atan2",
        NextAfter = "nextafter",
        And = "and",
        Or = "or",
        Xor = "xor",
        ShiftLeft = "shift_left",
        ShiftRightLogical = "shift_right_logical",
        ShiftRightArithmetic = "shift_right_arithmetic",
        /// Regularized lower incomplete gamma P(a, x); operands (a, x).
        Igamma = "igamma",
        /// Regularized upper incomplete gamma Q(a, x) = 1 - P(a, x).
        Igammac = "igammac",
        /// ∂P(a, x)/∂a.
        IgammaGradA = "igamma_grad_a",
        /// The derivative in `a` of a Gamma(a) sample `x`: -(∂P/∂a)/(∂P/∂x).
        RandomGammaGrad = "random_gamma_grad",
        /// ψ⁽ⁿ⁾(x); operands (n, x).
        Polygamma = "polygamma",
        /// Hurwitz ζ(x, q); operands (x, q).
        Zeta = "zeta",
    }
}

named_ops! {
    /// Comparisons (bool results).
    pub enum CompareOp {
        Eq = "eq",
        Ne = "ne",
        Lt = "lt",
        Le = "le",
        Gt = "gt",
        Ge = "ge",
    }
}

named_ops! {
    /// Reductions over axes (`Prim::Reduce`).
    pub enum ReduceOp {
        Sum = "reduce_sum",
        Max = "reduce_max",
        Min = "reduce_min",
        Prod = "reduce_prod",
        And = "reduce_and",
        Or = "reduce_or",
    }
}

/// The operand dtypes an op accepts (checked by `ir::shape`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kinds {
    Float,
    Int,
    /// int or float
    Num,
    /// int or bool
    IntBool,
    /// signed int or float (plus unsigned, harmless)
    Signed,
    Any,
}

impl Kinds {
    pub fn accepts(self, d: DType) -> bool {
        match self {
            Kinds::Float => d.is_float(),
            Kinds::Int => d.is_int(),
            Kinds::Num | Kinds::Signed => d.is_int() || d.is_float(),
            Kinds::IntBool => d.is_int() || d == DType::Bool,
            Kinds::Any => true,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Kinds::Float => "floating-point",
            Kinds::Int => "integer",
            Kinds::Num | Kinds::Signed => "numeric (integer or floating-point)",
            Kinds::IntBool => "integer or bool",
            Kinds::Any => "any",
        }
    }
}

// The op entries: each op's operand dtypes, next to its name. The matches are exhaustive so that a new op
// must say what it accepts (everything else about an op has a safe default: not folded, lowered by the
// backend's inline code or a call to its scalar implementation, run on the host by the GPU backend).
impl UnaryOp {
    pub fn kinds(self) -> Kinds {
        use UnaryOp::*;
        match self {
            Neg | Sign | Square => Kinds::Num,
            Abs => Kinds::Signed,
            Not => Kinds::IntBool,
            PopulationCount | Clz => Kinds::Int,
            Floor | Ceil | Round | RoundEven | Exp | Exp2 | Log | Log1p | Expm1 | Sqrt | Rsqrt | Cbrt | Sin
            | Cos | Tan | Tanh | Logistic | Erf | Erfc | Asin | Acos | Atan | Sinh | Cosh | Asinh | Acosh
            | Atanh | ErfInv | Ndtri | Lgamma | Digamma | BesselI0e | BesselI1e | IsFinite => Kinds::Float,
        }
    }
}

impl BinaryOp {
    pub fn kinds(self) -> Kinds {
        use BinaryOp::*;
        match self {
            Add | Sub | Mul | Div | Rem => Kinds::Num,
            Max | Min => Kinds::Any,
            Pow | PowLibm | Atan2 | NextAfter | Igamma | Igammac | IgammaGradA | RandomGammaGrad | Polygamma | Zeta => {
                Kinds::Float
            }
            And | Or | Xor => Kinds::IntBool,
            ShiftLeft | ShiftRightLogical | ShiftRightArithmetic => Kinds::Int,
        }
    }
}

impl ReduceOp {
    pub fn kinds(self) -> Kinds {
        match self {
            ReduceOp::Sum | ReduceOp::Prod => Kinds::Num,
            ReduceOp::Max | ReduceOp::Min => Kinds::Any,
            ReduceOp::And | ReduceOp::Or => Kinds::IntBool,
        }
    }
}

/// JAX's names of the primitives whose params are their own (the op enums above carry theirs): the one
/// list `Prim::name` (the printer) and the parser both read.
pub mod names {
    pub const INTEGER_POW: &str = "integer_pow";
    pub const SELECT_N: &str = "select_n";
    pub const CLAMP: &str = "clamp";
    pub const FMA: &str = "fma";
    pub const CONVERT_ELEMENT_TYPE: &str = "convert_element_type";
    pub const BITCAST_CONVERT_TYPE: &str = "bitcast_convert_type";
    pub const BROADCAST_IN_DIM: &str = "broadcast_in_dim";
    pub const RESHAPE: &str = "reshape";
    pub const SQUEEZE: &str = "squeeze";
    pub const EXPAND_DIMS: &str = "expand_dims";
    pub const TRANSPOSE: &str = "transpose";
    pub const SLICE: &str = "slice";
    pub const REV: &str = "rev";
    pub const ARGMAX: &str = "argmax";
    pub const ARGMIN: &str = "argmin";
    pub const IOTA: &str = "iota";
    pub const COPY: &str = "copy";
    pub const OPTIMIZATION_BARRIER: &str = "optimization_barrier";
}

/// A primitive with its params. Names in text/JSON are JAX's (`add`, `reduce_sum`, `broadcast_in_dim`...).
#[derive(Debug, Clone, PartialEq)]
pub enum Prim {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Compare(CompareOp),
    /// `integer_pow[y]`
    IntegerPow { y: i32 },
    /// `select_n pred case0 case1 ...`: pred is bool (2 cases) or int32; picks `cases[pred]`.
    SelectN,
    /// `clamp lo x hi`
    Clamp,
    /// `fma a b c`: a * b + c rounded once (float32/float64; the samplers' fused multiply-adds, as XLA:CPU
    /// contracts them). JAX exports no such primitive; cranax binds it internally.
    Fma,
    ConvertElementType { new_dtype: DType },
    BitcastConvertType { new_dtype: DType },
    BroadcastInDim { shape: Vec<usize>, broadcast_dimensions: Vec<usize> },
    Reshape { new_sizes: Vec<usize> },
    Squeeze { dimensions: Vec<usize> },
    ExpandDims { dimensions: Vec<usize> },
    Transpose { permutation: Vec<usize> },
    /// `slice`: elements `start + i*stride` below `limit` along each axis.
    Slice { start_indices: Vec<usize>, limit_indices: Vec<usize>, strides: Vec<usize> },
    /// `rev`: reverses the listed axes.
    Rev { dimensions: Vec<usize> },
    Reduce { op: ReduceOp, axes: Vec<usize> },
    /// `argmax`/`argmin` along one axis, index dtype given.
    ArgReduce { is_max: bool, axis: usize, index_dtype: DType },
    Iota { dtype: DType, shape: Vec<usize>, dimension: usize },
    /// A copy (JAX's `copy_p`); also what Python sends for identity outputs.
    Copy,
    /// `optimization_barrier a b ...`: its outputs are its operands. The optimizer never merges, folds or
    /// simplifies through it, so values computed from its outputs (a rematerialized computation) are not
    /// merged with the same values computed from its operands; `opt::barrier` removes it once the
    /// optimization rounds are done.
    OptimizationBarrier,
    /// A library primitive (dot_general, concatenate, gather, sort, ...): not fused, run as a call.
    Lib(super::library::LibOp),
    /// Control flow (`cond`, `while`, `scan`) with closed sub-programs (`ir::control`).
    Control(super::control::ControlOp),
}

/// One equation: `outputs = prim inputs`.
#[derive(Debug, Clone, PartialEq)]
pub struct Eqn {
    pub prim: Prim,
    pub inputs: Vec<Atom>,
    pub outputs: Vec<(VarId, Aval)>,
}

/// A closed program: inputs (arguments then closed-over constants, all passed as buffers), equations in
/// order, and outputs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    pub name: String,
    pub invars: Vec<(VarId, Aval)>,
    pub eqns: Vec<Eqn>,
    pub outvars: Vec<Atom>,
}

impl Prim {
    /// JAX's name for the primitive, as in printed jaxprs.
    pub fn name(&self) -> &'static str {
        match self {
            Prim::Unary(op) => op.name(),
            Prim::Binary(op) => op.name(),
            Prim::Compare(op) => op.name(),
            Prim::IntegerPow { .. } => names::INTEGER_POW,
            Prim::SelectN => names::SELECT_N,
            Prim::Clamp => names::CLAMP,
            Prim::Fma => names::FMA,
            Prim::ConvertElementType { .. } => names::CONVERT_ELEMENT_TYPE,
            Prim::BitcastConvertType { .. } => names::BITCAST_CONVERT_TYPE,
            Prim::BroadcastInDim { .. } => names::BROADCAST_IN_DIM,
            Prim::Reshape { .. } => names::RESHAPE,
            Prim::Squeeze { .. } => names::SQUEEZE,
            Prim::ExpandDims { .. } => names::EXPAND_DIMS,
            Prim::Transpose { .. } => names::TRANSPOSE,
            Prim::Slice { .. } => names::SLICE,
            Prim::Rev { .. } => names::REV,
            Prim::Reduce { op, .. } => op.name(),
            Prim::ArgReduce { is_max: true, .. } => names::ARGMAX,
            Prim::ArgReduce { is_max: false, .. } => names::ARGMIN,
            Prim::Iota { .. } => names::IOTA,
            Prim::Copy => names::COPY,
            Prim::OptimizationBarrier => names::OPTIMIZATION_BARRIER,
            Prim::Lib(op) => op.name(),
            Prim::Control(op) => op.name(),
        }
    }

    /// Whether the equation has effects beyond its outputs (a host callback with effects, or control
    /// flow around one): passes keep it even when its outputs are unused and never merge it.
    pub fn is_effectful(&self) -> bool {
        use super::control::ControlOp;
        let any = |p: &Program| p.eqns.iter().any(|e| e.prim.is_effectful());
        match self {
            Prim::Lib(op) => op.is_effectful(),
            Prim::Control(ControlOp::Cond { branches }) => branches.iter().any(any),
            Prim::Control(ControlOp::While { cond, body, .. }) => any(cond) || any(body),
            Prim::Control(ControlOp::Scan { body, .. }) => any(body),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_names_round_trip() {
        for &op in UnaryOp::ALL {
            assert_eq!(UnaryOp::from_name(op.name()), Some(op));
        }
        for &op in BinaryOp::ALL {
            assert_eq!(BinaryOp::from_name(op.name()), Some(op));
        }
        for &op in CompareOp::ALL {
            assert_eq!(CompareOp::from_name(op.name()), Some(op));
        }
        for &op in ReduceOp::ALL {
            assert_eq!(ReduceOp::from_name(op.name()), Some(op));
        }
        assert_eq!(UnaryOp::from_name("add"), None);
    }
}

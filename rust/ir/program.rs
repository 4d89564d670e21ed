//! The jaxpr as the core sees it: typed variables, equations of primitives with their params, outputs.
//! One closed primitive enum; params live inside the variant that needs them.

use super::dtype::{DType, Scalar};

/// A variable's id, unique within one program (sub-programs of control flow share the id space).
pub type VarId = u32;

/// Abstract value: dtype and shape (row-major).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Aval {
    pub dtype: DType,
    pub shape: Vec<usize>,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg, Abs, Sign, Floor, Ceil, Round, // round: half away from zero (JAX rounding_method=0) unless `RoundEven`
    RoundEven,
    Exp, Exp2, Log, Log1p, Expm1, Sqrt, Rsqrt, Cbrt,
    Sin, Cos, Tan, Tanh, Logistic, Erf,
    Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, ErfInv, Lgamma, Digamma,
    Not, IsFinite, Square, PopulationCount,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add, Sub, Mul, Div, Rem, Max, Min, Pow, Atan2, NextAfter,
    And, Or, Xor, ShiftLeft, ShiftRightLogical, ShiftRightArithmetic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp { Eq, Ne, Lt, Le, Gt, Ge }

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp { Sum, Max, Min, Prod, And, Or }

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
        use BinaryOp as B;
        use UnaryOp as U;
        match self {
            Prim::Unary(u) => match u {
                U::Neg => "neg", U::Abs => "abs", U::Sign => "sign", U::Floor => "floor", U::Ceil => "ceil",
                U::Round => "round", U::RoundEven => "round_even", U::Exp => "exp", U::Exp2 => "exp2",
                U::Log => "log", U::Log1p => "log1p", U::Expm1 => "expm1", U::Sqrt => "sqrt",
                U::Rsqrt => "rsqrt", U::Cbrt => "cbrt", U::Sin => "sin", U::Cos => "cos", U::Tan => "tan",
                U::Tanh => "tanh", U::Logistic => "logistic", U::Erf => "erf", U::Asin => "asin",
                U::Acos => "acos", U::Atan => "atan", U::Sinh => "sinh", U::Cosh => "cosh",
                U::Asinh => "asinh", U::Acosh => "acosh", U::Atanh => "atanh", U::ErfInv => "erf_inv",
                U::Lgamma => "lgamma", U::Digamma => "digamma", U::Not => "not", U::IsFinite => "is_finite",
                U::Square => "square", U::PopulationCount => "population_count",
            },
            Prim::Binary(b) => match b {
                B::Add => "add", B::Sub => "sub", B::Mul => "mul", B::Div => "div", B::Rem => "rem",
                B::Max => "max", B::Min => "min", B::Pow => "pow", B::Atan2 => "atan2",
                B::NextAfter => "nextafter", B::And => "and", B::Or => "or", B::Xor => "xor",
                B::ShiftLeft => "shift_left", B::ShiftRightLogical => "shift_right_logical",
                B::ShiftRightArithmetic => "shift_right_arithmetic",
            },
            Prim::Compare(c) => match c {
                CompareOp::Eq => "eq", CompareOp::Ne => "ne", CompareOp::Lt => "lt",
                CompareOp::Le => "le", CompareOp::Gt => "gt", CompareOp::Ge => "ge",
            },
            Prim::IntegerPow { .. } => "integer_pow",
            Prim::SelectN => "select_n",
            Prim::Clamp => "clamp",
            Prim::ConvertElementType { .. } => "convert_element_type",
            Prim::BitcastConvertType { .. } => "bitcast_convert_type",
            Prim::BroadcastInDim { .. } => "broadcast_in_dim",
            Prim::Reshape { .. } => "reshape",
            Prim::Squeeze { .. } => "squeeze",
            Prim::ExpandDims { .. } => "expand_dims",
            Prim::Transpose { .. } => "transpose",
            Prim::Slice { .. } => "slice",
            Prim::Rev { .. } => "rev",
            Prim::Reduce { op, .. } => match op {
                ReduceOp::Sum => "reduce_sum", ReduceOp::Max => "reduce_max", ReduceOp::Min => "reduce_min",
                ReduceOp::Prod => "reduce_prod", ReduceOp::And => "reduce_and", ReduceOp::Or => "reduce_or",
            },
            Prim::ArgReduce { is_max: true, .. } => "argmax",
            Prim::ArgReduce { is_max: false, .. } => "argmin",
            Prim::Iota { .. } => "iota",
            Prim::Copy => "copy",
            Prim::Lib(op) => op.name(),
            Prim::Control(op) => op.name(),
        }
    }
}

//! The crate's error type.

/// Why a body could not be decoded or an object could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The body does not start with the 4-byte `k8s\0` magic of Kubernetes protobuf.
    #[error("not a Kubernetes protobuf body: missing the \"k8s\\0\" magic prefix")]
    MissingMagic,
    /// The input ended in the middle of a value, or a length runs past its end.
    #[error("truncated protobuf input: {0}")]
    Truncated(&'static str),
    /// A varint is longer than 10 bytes or overflows 64 bits.
    #[error("malformed varint")]
    BadVarint,
    /// A field key carries tag 0 or a wire type that is invalid or unsupported (groups).
    #[error("invalid field key: tag {tag}, wire type {wire_type}")]
    BadKey {
        /// The field number read from the key.
        tag: u64,
        /// The wire type read from the key.
        wire_type: u8,
    },
    /// A known field arrived with a wire type that does not match its declared type.
    #[error("field {field} of {message}: unexpected wire type {wire_type}")]
    WireType {
        /// The protobuf message (e.g. `k8s.io.api.core.v1.ConfigMap`).
        message: &'static str,
        /// The JSON name of the field (empty for an inlined struct).
        field: &'static str,
        /// The wire type found.
        wire_type: u8,
    },
    /// Messages are nested deeper than the decoder allows.
    #[error("messages nested deeper than {0} levels")]
    TooDeep(usize),
    /// The envelope's `runtime.Unknown` has no `apiVersion` or no `kind`.
    #[error("the object has no apiVersion or no kind")]
    MissingTypeMeta,
    /// The envelope declares a content encoding (e.g. gzip) this crate does not handle.
    #[error("unsupported content encoding {0:?}")]
    UnsupportedEncoding(String),
    /// No field table is known for this kind; nothing was guessed.
    #[error("unsupported kind {kind} in {api_version} for protobuf")]
    UnsupportedKind {
        /// The object's `apiVersion`.
        api_version: String,
        /// The object's `kind`.
        kind: String,
    },
    /// A value is well-formed protobuf but not a valid value of its Kubernetes type (bad UTF-8,
    /// time out of range, unknown IntOrString type, non-finite double, malformed embedded JSON...).
    #[error("invalid value for {message}.{field}: {reason}")]
    InvalidValue {
        /// The protobuf message holding the value.
        message: &'static str,
        /// The JSON name of the field.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// While encoding: the JSON object has a field the kind's schema does not know.
    #[error("unknown field {field:?} in {message}")]
    UnknownField {
        /// The protobuf message being encoded.
        message: &'static str,
        /// The JSON key that has no protobuf field.
        field: String,
    },
    /// While encoding: a JSON value has the wrong type for its field.
    #[error("field {field} of {message}: expected {expected}")]
    JsonType {
        /// The protobuf message being encoded.
        message: &'static str,
        /// The JSON name of the field.
        field: &'static str,
        /// The JSON type the field needs.
        expected: &'static str,
    },
}

impl Error {
    /// Shorthand for [`Error::InvalidValue`].
    pub(crate) fn invalid(
        message: &'static str,
        field: &'static str,
        reason: impl Into<String>,
    ) -> Self {
        Error::InvalidValue {
            message,
            field,
            reason: reason.into(),
        }
    }
}

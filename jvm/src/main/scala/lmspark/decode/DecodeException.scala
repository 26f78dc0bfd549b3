package lmspark.decode

/** Raised by decoders on malformed encoded data (truncated values, bad run headers, dictionary ids
  * out of range). Carries no file context; the column reader adds it. */
final class DecodeException(message: String) extends RuntimeException(message)

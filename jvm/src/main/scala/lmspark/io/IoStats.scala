package lmspark.io

/** What one open file's reads cost: `requests` (ranged reads sent to the file system: the ranges of
  * a vectored call, or a positioned read that does not continue the previous one), `roundTrips`
  * (calls the reader waited on in turn: a vectored call, however many ranges it has, is one),
  * `bytesRequested` (bytes those requests asked for), `bytesUsed` (bytes handed to the reader's
  * parsers and decoders) and `waitNanos` (time spent waiting for fetched bytes, or in reads). Not
  * thread-safe: one task's reader updates it. */
final class IoStats {
  var requests: Long = 0L
  var roundTrips: Long = 0L
  var bytesRequested: Long = 0L
  var bytesUsed: Long = 0L
  var waitNanos: Long = 0L
}

package lmspark

/**
 * File metadata access through parquet-java: footers (statistics, page indexes and bloom filters
 * come later, each checked before it is trusted).
 *
 * Files:
 *  - `FooterReader.scala`: opens a file and reads the footer of one split's row groups.
 */
package object meta

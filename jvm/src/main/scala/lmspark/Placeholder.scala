package lmspark
object Placeholder

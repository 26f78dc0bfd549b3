package lmspark

import java.nio.file.Paths

import org.scalatest.funsuite.AnyFunSuite

/** The README table and `python/lmspark/conf.py` are what `LmConfDocs` generates from `LmConf`. */
class LmConfDocsSuite extends AnyFunSuite {
  private val root = Paths.get(sys.props.getOrElse("user.dir", "."))

  test("README config table is generated from LmConf (run `make docs`)") {
    val readme = LmConfDocs.read(root.resolve("README.md"))
    assert(readme == LmConfDocs.withTable(readme))
  }

  test("python/lmspark/conf.py is generated from LmConf (run `make docs`)") {
    assert(LmConfDocs.read(root.resolve("python/lmspark/conf.py")) == LmConfDocs.pythonModule)
  }

  test("every entry follows the naming convention and has a doc") {
    LmConf.entries.foreach { e =>
      assert(e.key.matches("spark\\.lmspark\\.([a-z][A-Za-z]*\\.)*[a-z][A-Za-z]*"), e.key)
      assert(e.doc.trim.length > 10, e.key)
      // Feature switches end in `.enabled` (the benchmark turns each into an ablation); checks that
      // are not features keep the name users were promised.
      if (e.default.isInstanceOf[Boolean] && e != LmConf.VERIFY_CHECKSUMS) assert(e.key.endsWith(".enabled"), e.key)
    }
  }
}

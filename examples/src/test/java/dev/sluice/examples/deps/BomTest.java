package dev.sluice.examples.deps;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.internal.OptionalLibrary;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * {@code sluice-bom} lets a user add every optional library by groupId and artifactId alone, at the
 * version Sluice is built with: it manages each optional dependency of the library modules and
 * each artifact an {@link OptionalLibrary} names, with the parent POM's versions.
 */
class BomTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  @Test
  void bomManagesEveryOptionalLibraryAtTheParentsVersion() throws Exception {
    Document parent = read(ROOT.resolve("pom.xml"));
    Document bom = read(ROOT.resolve("bom/pom.xml"));
    Map<String, String> parentProps = properties(parent);
    Map<String, String> bomProps = properties(bom);
    assertThat(bomProps).isNotEmpty();
    bomProps.forEach((name, value) -> assertThat(value).as("sluice-bom's %s", name).isEqualTo(parentProps.get(name)));

    Map<String, Element> managed = new HashMap<>();
    for (Element d : dependencies(bom, "dependencyManagement")) {
      managed.put(text(d, "groupId") + ":" + text(d, "artifactId"), d);
    }
    List<String> optional = new ArrayList<>();
    for (String module : List.of("pipeline-core", "pipeline-operators", "pipeline-io")) {
      for (Element d : dependencies(read(ROOT.resolve(module).resolve("pom.xml")), "project")) {
        if ("true".equals(text(d, "optional"))) {
          optional.add(text(d, "groupId") + ":" + text(d, "artifactId"));
        }
      }
    }
    assertThat(optional).contains("net.openhft:chronicle-map", "org.apache.parquet:parquet-hadoop",
        "org.apache.arrow:arrow-vector");
    for (Field f : OptionalLibrary.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == OptionalLibrary.class) {
        optional.addAll(((OptionalLibrary) f.get(null)).coordinates());
      }
    }
    assertThat(managed.keySet()).containsAll(optional);
    for (String ga : optional) {
      assertThat(text(managed.get(ga), "version")).as("version of %s", ga).matches("\\$\\{[^}]+}");
    }
    assertThat(managed.get("net.openhft:chronicle-map").getElementsByTagName("exclusion").item(0).getTextContent())
        .contains("chronicle-analytics");
  }

  private static Document read(Path pom) throws Exception {
    return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
  }

  private static Map<String, String> properties(Document pom) {
    Map<String, String> out = new HashMap<>();
    NodeList props = pom.getDocumentElement().getElementsByTagName("properties");
    if (props.getLength() > 0) {
      NodeList children = props.item(0).getChildNodes();
      for (int i = 0; i < children.getLength(); i++) {
        if (children.item(i) instanceof Element e) {
          out.put(e.getTagName(), e.getTextContent().trim());
        }
      }
    }
    return out;
  }

  /** The {@code dependency} elements of the {@code dependencies} directly under {@code parentTag}. */
  private static List<Element> dependencies(Document pom, String parentTag) {
    List<Element> out = new ArrayList<>();
    NodeList lists = pom.getElementsByTagName("dependencies");
    for (int i = 0; i < lists.getLength(); i++) {
      Node list = lists.item(i);
      if (list.getParentNode() instanceof Element p && p.getTagName().equals(parentTag)) {
        NodeList deps = list.getChildNodes();
        for (int j = 0; j < deps.getLength(); j++) {
          if (deps.item(j) instanceof Element d && d.getTagName().equals("dependency")) {
            out.add(d);
          }
        }
      }
    }
    return out;
  }

  private static String text(Element e, String tag) {
    NodeList n = e.getElementsByTagName(tag);
    return n.getLength() == 0 ? null : n.item(0).getTextContent().trim();
  }
}

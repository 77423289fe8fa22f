package dev.sluice.io.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** Reading the JSON files that describe datasets ({@code metadata.json}). */
public final class JsonFiles {
  private JsonFiles() {}

  /**
   * The JSON object in {@code file}.
   *
   * @throws DatasetFormatException naming the file for malformed JSON or a value that is not an object
   * @throws DatasetIOException when the file is missing or unreadable
   */
  public static JsonNode readObject(Path file) {
    String resource = file.toString();
    JsonNode root;
    try {
      root = new ObjectMapper().readTree(file.toFile());
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new DatasetFormatException(resource, null, "malformed JSON: " + e.getOriginalMessage());
    } catch (NoSuchFileException | FileNotFoundException e) {
      throw new DatasetIOException(resource, "no such file", e);
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot read: " + e, e);
    }
    if (root == null || !root.isObject()) {
      throw new DatasetFormatException(resource, null, "expected a JSON object");
    }
    return root;
  }

  /**
   * The JSON object in {@code bytes}, read from {@code resource} (a remote file).
   *
   * @throws DatasetFormatException naming the resource for malformed JSON or a value that is not an object
   */
  public static JsonNode readObject(String resource, byte[] bytes) {
    JsonNode root;
    try {
      root = new ObjectMapper().readTree(bytes);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new DatasetFormatException(resource, null, "malformed JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot read: " + e, e);
    }
    if (root == null || !root.isObject()) {
      throw new DatasetFormatException(resource, null, "expected a JSON object");
    }
    return root;
  }
}

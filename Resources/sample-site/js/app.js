// Counts what the page loaded; the text is the same online and offline.
document.addEventListener("DOMContentLoaded", function () {
  var images = document.images.length;
  var sheets = document.styleSheets.length;
  document.getElementById("status").textContent =
    "Resources on this page: " + images + " images, " + sheets + " stylesheets, 1 script.";
});

// Seeks the gallery's video to its middle and says what the browser could do: the text is the
// same online and offline when the cache answers range requests.
document.addEventListener("DOMContentLoaded", function () {
  var video = document.getElementById("clip");
  if (!video) return;
  var status = document.getElementById("video-status");
  video.addEventListener("loadedmetadata", function () {
    status.textContent = "Video: loaded, seeking.";
    video.currentTime = video.duration / 2;
  });
  video.addEventListener("seeked", function () {
    var seekable = video.seekable.length ? video.seekable.start(0).toFixed(1) + "–" + video.seekable.end(0).toFixed(1) + " s" : "nothing";
    status.textContent = "Video: seeked to " + video.currentTime.toFixed(1) + " of " + video.duration.toFixed(1) + " s; seekable " + seekable + ".";
  });
  video.addEventListener("error", function () {
    status.textContent = "Video: error " + (video.error ? video.error.code : "?") + ".";
  });
});

// Counts what the page loaded; the text is the same online and offline.
document.addEventListener("DOMContentLoaded", function () {
  var images = document.images.length;
  var sheets = document.styleSheets.length;
  document.getElementById("status").textContent =
    "Resources on this page: " + images + " images, " + sheets + " stylesheets, 1 script.";
});

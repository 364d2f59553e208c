(function(){
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr[data-step]"));
  function mark(name){
    rows.forEach(function(tr){
      var hit = tr.getAttribute("data-lock") === name;
      if (!hit) {
        var ls = tr.querySelectorAll(".lock");
        for (var i = 0; i < ls.length; i++) {
          if (ls[i].getAttribute("data-lock") === name) { hit = true; break; }
        }
      }
      tr.classList.toggle("hl", name !== null && hit);
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll(".lock"), function(b){
    b.addEventListener("mouseenter", function(){ mark(b.getAttribute("data-lock")); });
    b.addEventListener("mouseleave", function(){ mark(null); });
  });
  if (document.querySelector(".other-thread")) {
    var btn = document.createElement("button");
    btn.type = "button";
    btn.textContent = "Hide threads not in the race";
    btn.addEventListener("click", function(){
      var on = document.body.classList.toggle("hide-others");
      btn.textContent = on ? "Show all threads" : "Hide threads not in the race";
    });
    var t = document.querySelector("table.schedule");
    t.parentNode.insertBefore(btn, t);
  }
  window.addEventListener("beforeprint", function(){
    Array.prototype.forEach.call(document.querySelectorAll("details.elided"), function(d){ d.open = true; });
  });
})();

package bplib;

/** An excluded super class. */
public class Base {
    protected final String tag;

    public Base(String tag) {
        this.tag = tag;
    }
}
